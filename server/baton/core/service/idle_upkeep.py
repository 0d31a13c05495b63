"""Idle compaction in the service: each append or reply starts a session's idle wait again
(`automatic/idle.py`); when it runs out, the session is compacted in the background if it
still should be, as an auto-compaction its user may undo."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from baton.core.background import Background
from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.automatic.idle import ACTIVE, IdleCompaction, why_not
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.conversation.messages import new_id
from baton.core.errors import BatonError
from baton.core.service.events import Event, SessionChanged, SessionClosed
from baton.core.service.runtime import Runtimes
from baton.core.settings import Settings
from baton.core.usage.budget import Usage

log = logging.getLogger(__name__)


class Host(Protocol):
    """What idle compaction asks of the service."""

    background: Background
    settings: Settings

    def usage(self, session_id: str) -> Usage: ...


CompactNow = Callable[[str, CompactRequest], Awaitable[CompactResult]]


class IdleUpkeep:
    def __init__(
        self, host: Host, runtimes: Runtimes, compact: CompactNow, auto: AutoCompactor
    ) -> None:
        self._host = host
        self._runtimes = runtimes
        self._compact = compact  # the service's `compaction.compact`
        self._auto = auto  # its pause holds idle compaction too; a success is told through it
        self.timers = IdleCompaction(host.background.debounce, self.due)

    def heard(self, event: Event) -> None:
        """The service's events: activity starts the wait again, a closed session forgets."""
        if isinstance(event, SessionChanged) and event.reason in ACTIVE:
            if self._host.settings.idle_compact.enabled:
                self.timers.active(
                    event.session_id, event.session.view_messages(), self._host.settings
                )
        elif isinstance(event, SessionClosed):
            self.timers.closed(event.session_id)

    async def due(self, session_id: str) -> None:
        """The idle wait ran out: compact now unless something says not to."""
        runtime = self._runtimes.get(session_id)
        if runtime is None:
            return  # deleted or closed meanwhile
        session = runtime.session
        before = self._host.usage(session_id)
        reason = why_not(
            before,
            self._host.settings,
            replying=runtime.replying,
            compacting=session.compacting,
            draft_open=self.timers.draft_open(session_id),
            read_only=session.read_only,
            paused=self._auto.paused(session_id),
        )
        if reason is not None:
            log.debug("session %s idle, not compacted: %s", session_id, reason)
            return
        boundary_id = new_id("cmp")
        self._auto.started(session_id, "idle", boundary_id)
        request = CompactRequest(direction="all", trigger="auto", boundary_id=boundary_id)
        try:
            result = await self._compact(session_id, request)
        except BaseException as exc:  # the start is told its end, whatever ended it
            figures = (before.used_tokens, before.used_tokens, before.blocking_limit)
            self._auto.idle_stopped(session_id, figures, exc)
            if not isinstance(exc, BatonError):
                raise  # cancelled (the server stops), or a bug: Background logs it
            log.info("idle compaction of %s did not run: %s", session_id, exc.message)
            return
        log.info(
            "idle compaction of %s: %d -> %d tokens",
            session_id,
            result.pre_tokens,
            result.post_tokens,
        )
        after = self._host.usage(session_id)
        figures = (before.used_tokens, after.used_tokens, after.blocking_limit)
        self._auto.idle_compacted(session_id, figures, result.dropped)
