"""Work the service does on its own after a change: calibration, auto-compact, exact counts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from baton.core.background import Background
from baton.core.compaction.automatic.ahead import SummariesAhead
from baton.core.compaction.automatic.auto import AutoCompactor, CompactFn, PausedBy
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactResult
from baton.core.compaction.summary.summarizers import Progress, Summarizer
from baton.core.conversation.session import Session
from baton.core.errors import ApiKeyMissing
from baton.core.model_api.exact_counts import ExactCounts, Fingerprint, fingerprint
from baton.core.service.model_access import KeyMissingSummarizer, ModelAccess
from baton.core.settings import Settings
from baton.core.usage.budget import Usage, observe_response
from baton.core.usage.estimator import Estimator

# Opens progress for work nobody requested (a background auto-compaction): the server
# turns it into server-initiated workDoneProgress whose cancel button cancels the work.
ProgressScope = Callable[[str], AbstractAsyncContextManager[Progress]]
AUTO_COMPACT_TITLE = "Baton: auto-compacting"


class Host(Protocol):
    """What upkeep needs from the service."""

    settings: Settings
    estimator: Estimator
    models: ModelAccess
    background: Background
    progress_scope: ProgressScope | None

    def session(self, session_id: str) -> Session: ...

    def open_session_ids(self) -> list[str]: ...

    def usage(self, session_id: str) -> Usage: ...

    def tools(self, session_id: str) -> list[dict[str, Any]] | None: ...

    def compact_context(
        self,
        progress: Progress | None = None,
        session_id: str | None = None,
        *,
        summarizer: Summarizer | None = None,
    ) -> CompactContext: ...


class Upkeep:
    """`changed(session_id, reason)` and `publish_usage(session_id)` are the service's own
    ways of telling the client, so what upkeep changes is announced like anything else."""

    def __init__(
        self,
        host: Host,
        changed: Callable[[str, str], object],
        publish_usage: Callable[[str], object],
        compact: CompactFn | None = None,
    ) -> None:
        self._host = host
        self._changed = changed
        self._publish_usage = publish_usage
        # summaries written ahead run as background work with their own progress
        self.ahead = SummariesAhead(host.background.spawn, lambda: host.progress_scope)
        self.auto = AutoCompactor(host, ahead=self.ahead, compact=compact)
        self.exact = ExactCounts(host.background)

    # ---- calibration from appended replies ----------------------------------------------

    def learn_from_usage(self, session: Session, message_ids: Sequence[str], tools: int) -> None:
        """An appended assistant message with the API's real usage calibrates the estimator,
        as a reply streamed through `send` does (observe_response skips any other message).
        Records of one response share its usage, so each response teaches once."""
        responses: set[str] = set()
        for message_id in message_ids:
            api_id = session.get(message_id).api_message_id
            if api_id is None or api_id not in responses:
                observe_response(session, message_id, self._host.estimator, tools_tokens=tools)
            if api_id is not None:
                responses.add(api_id)

    # ---- auto-compact after an append ----------------------------------------------------

    def paused(self, session_id: str) -> bool:
        return self.auto.paused(session_id)

    def paused_by(self, session_id: str) -> PausedBy | None:
        return self.auto.paused_by(session_id)

    def after_reply(self, session_id: str) -> None:
        """A reply may have brought usage past the point where the summary is written ahead."""
        try:
            context = self._host.compact_context(None, session_id)
        except ApiKeyMissing:
            return  # nothing can write a model summary ahead without a key
        self.auto.start_ahead(self._host.session(session_id), context)

    def after_change(self, session_id: str, reason: str) -> None:
        """A change other than an append may make the summary written ahead stale."""
        if reason in ("append", "reply", "create", "delete"):
            return
        self.ahead.check(self._host.session(session_id))

    async def auto_check(self, session_id: str, reason: str) -> None:
        """Auto-compact if needed, with progress when it is going to compact."""
        session = self._host.session(session_id)
        was_paused = self.paused(session_id)
        scope = self._host.progress_scope
        if scope is not None and self._over_threshold(session):
            async with scope(AUTO_COMPACT_TITLE) as progress:
                outcome = await self._auto_run(session, reason, progress)
        else:
            outcome = await self._auto_run(session, reason, None)
        if outcome is not None:
            self._changed(session_id, "compact")
        elif self.paused(session_id) != was_paused:
            self._publish_usage(session_id)  # the breaker opened: the meter says so

    async def _auto_run(
        self, session: Session, reason: str, progress: Progress | None
    ) -> CompactResult | None:
        session_id = session.session_id
        try:
            context = self._host.compact_context(progress, session_id)
        except ApiKeyMissing:
            # the anthropic summarizer chosen without a key: the attempt fails inside the
            # compaction, so the breaker counts it and, after repeated failures, the meter
            # and the diagnostics tell the user (not just a log line on every append)
            keyless = KeyMissingSummarizer()
            context = self._host.compact_context(progress, session_id, summarizer=keyless)
        return await self.auto.check(session, reason=reason, context=context)

    def _over_threshold(self, session: Session) -> bool:
        settings = self._host.settings
        if not settings.auto_compact.enabled or session.compacting or session.read_only:
            return False
        if self.paused(session.session_id):
            return False
        usage = self._host.usage(session.session_id)
        return usage.used_tokens >= usage.auto_compact_threshold

    # ---- exact counts (setting `exactCounts`) --------------------------------------------

    def fingerprint(self, session: Session) -> Fingerprint:
        model = session.model or self._host.settings.model
        return fingerprint(session, model, self._host.tools(session.session_id))

    def exact_figure(self, session: Session) -> int | None:
        if not self._host.settings.exact_counts:
            return None
        return self.exact.figure(session.session_id, self.fingerprint(session))

    def want_exact_count(self, session_id: str) -> None:
        """After a change: ask the API for the exact figure, debounced, off the hot path."""
        if not (self._host.settings.exact_counts and self._host.models.has_key):
            return
        current = self.fingerprint(self._host.session(session_id))
        self.exact.request(session_id, current, lambda: self._count_exactly(session_id))

    async def _count_exactly(self, session_id: str) -> None:
        host = self._host
        if session_id not in host.open_session_ids() or not host.settings.exact_counts:
            return  # deleted, or the setting went off, while the count waited
        session = host.session(session_id)
        model = session.model or host.settings.model
        client = host.models.client(host.settings)
        if await self.exact.count(session, model, host.tools(session_id), client):
            self._publish_usage(session_id)

    def forget(self, session_id: str) -> None:
        self.auto.reset(session_id)
        self.ahead.forget(session_id)
        self.exact.forget(session_id)
