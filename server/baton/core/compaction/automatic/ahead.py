"""Summaries written ahead of auto-compact: started in the background, committed at the threshold.

When usage reaches `autoCompact.backgroundPercent` of the auto-compact threshold, the
summary of the view as it is then is requested in the background while the conversation
goes on. When usage reaches the threshold, a summary that is ready and still fresh is
committed at once (the messages appended since follow it, as after any compaction that
ran while turns arrived); one still being written is awaited. A summary goes stale when
anything but an append changes the snapshot it was written for (an undo, another
compaction, a pin, a message replaced, another summarizer): it is dropped, and its request
cancelled if it still runs. A summary that failed or was cancelled is not tried again
until the session's compactions change: the auto-compaction at the threshold writes its
own, as it would without this feature.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from typing import Any

from baton.core.compaction import engine
from baton.core.compaction.engine import CompactContext, PreparedSummary
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.errors import BatonError
from baton.core.settings import AutoCompactSettings

log = logging.getLogger(__name__)

MODEL_PERCENT = 80.0  # the default for summaries a model writes (GitHub Copilot's SDK: 0.80)
OFFLINE_SUMMARIZERS = frozenset({"extractive", "memory"})  # fast enough at the threshold
TITLE = "Baton: summarizing ahead of auto-compact"

Spawn = Callable[[Coroutine[Any, Any, Any], str], "asyncio.Task[Any] | None"]
ProgressScope = Callable[[str], AbstractAsyncContextManager[Progress]]


def start_point(settings: AutoCompactSettings, summarizer: str, threshold: int) -> int | None:
    """The usage at which the summary is started, or None when writing ahead is off
    (`backgroundPercent` 0, or null with an offline summarizer)."""
    percent = settings.background_percent
    if percent is None:
        percent = 0.0 if summarizer in OFFLINE_SUMMARIZERS else MODEL_PERCENT
    if percent <= 0:
        return None
    return int(threshold * percent / 100)


@dataclass
class _Ahead:
    """One summary being written (or written) for a snapshot of a session's view."""

    messages: list[Message]  # the snapshot, the very objects (a replaced one is another)
    pinned: frozenset[str]
    active: tuple[str, ...]  # the session's compactions then
    summarizer: str
    task: asyncio.Task[Any] | None = None
    prepared: PreparedSummary | None = None

    @classmethod
    def of(cls, session: Session, summarizer: str) -> _Ahead:
        view = session.view_messages()
        pinned = frozenset(m.id for m in view if m.pinned)
        return cls(view, pinned, tuple(session.active), summarizer)

    def fresh(self, session: Session, summarizer: str | None = None, deep: bool = True) -> bool:
        """True while only appends have changed the session since the snapshot. `deep`
        False looks only at what an append check can afford (the compactions, the length),
        not at every message of the snapshot."""
        if summarizer is not None and summarizer != self.summarizer:
            return False
        if tuple(session.active) != self.active or len(session.view) < len(self.messages):
            return False
        if not deep:
            return True
        for mid, message in zip(session.view, self.messages, strict=False):
            if mid != message.id or session.messages.get(mid) is not message:
                return False
        return frozenset(m.id for m in self.messages if m.pinned) == self.pinned


@dataclass(eq=False)
class AheadState:
    """One session's summary written ahead, and the compactions for which one failed or
    was cancelled. The service keeps it in the session's runtime (core/service/runtime.py)."""

    entry: _Ahead | None = None
    declined: tuple[str, ...] | None = None  # the session's compactions when one failed

    def stop(self) -> None:
        """Forget the summary, cancelling its request if it still runs."""
        entry, self.entry = self.entry, None
        if entry is not None and entry.task is not None and not entry.task.done():
            entry.task.cancel()


StateOf = Callable[[str], AheadState]


class SummariesAhead:
    """Per session at most one summary written ahead. `spawn` runs background work (the
    service's one owner of tasks); `scope()` gives the progress scope, if any, for work
    nobody requested (its cancel button cancels the summary); `states` each session's
    state, from its owner (kept here when not given)."""

    def __init__(
        self,
        spawn: Spawn,
        scope: Callable[[], ProgressScope | None],
        states: StateOf | None = None,
    ) -> None:
        self._spawn = spawn
        self._scope = scope
        own: dict[str, AheadState] = {}
        self._state: StateOf = states or (lambda sid: own.setdefault(sid, AheadState()))

    def running(self, session_id: str) -> bool:
        entry = self._state(session_id).entry
        return entry is not None and entry.task is not None and not entry.task.done()

    def ready(self, session_id: str) -> bool:
        entry = self._state(session_id).entry
        return entry is not None and entry.prepared is not None

    def maybe_start(self, session: Session, ctx: CompactContext, used: int, threshold: int) -> bool:
        """Start the summary if usage passed the start point and none is on its way."""
        sid = session.session_id
        state = self._state(sid)
        if state.entry is not None and not state.entry.fresh(session, deep=False):
            state.stop()  # compacted or undone since (a pin is checked when it happens)
        if state.entry is not None:
            return False
        if state.declined == tuple(session.active):
            return False  # failed or cancelled for these compactions: the threshold decides
        point = start_point(ctx.settings.auto_compact, ctx.summarizer.name, threshold)
        if point is None or used < point or not session.view:
            return False
        entry = _Ahead.of(session, ctx.summarizer.name)
        state.entry = entry
        log.info(
            "session %s: %d tokens >= %d, summarizing ahead of auto-compact at %d",
            sid,
            used,
            point,
            threshold,
        )
        entry.task = self._spawn(self._write(session, entry, ctx), "a summary written ahead")
        if entry.task is None:  # no loop to run it on
            state.entry = None
            return False
        return True

    async def take(self, session: Session, summarizer: str) -> PreparedSummary | None:
        """The summary for the auto-compaction at the threshold: the one written ahead when
        it is (or, once its request ends, turns out) fresh; None otherwise."""
        state = self._state(session.session_id)
        entry = state.entry
        if entry is None:
            return None
        if entry.task is not None and not entry.task.done() and entry.fresh(session, summarizer):
            await asyncio.wait({entry.task})  # a cancel of the waiter leaves the summary be
        if state.entry is not entry:
            return None
        state.entry = None
        if entry.prepared is None or not entry.fresh(session, summarizer):
            AheadState(entry).stop()
            return None
        return entry.prepared

    def check(self, session: Session) -> None:
        """Drop the summary if the session changed other than by appends (call after an
        undo, a compaction, a pin)."""
        entry = self._state(session.session_id).entry
        if entry is not None and not entry.fresh(session):
            log.info("session %s changed: the summary written ahead is dropped", session.session_id)
            self.drop(session.session_id)

    def drop(self, session_id: str) -> None:
        """Forget the session's summary, cancelling its request if it still runs."""
        self._state(session_id).stop()

    def forget(self, session_id: str) -> None:
        state = self._state(session_id)
        state.stop()
        state.declined = None

    # ---- the background work -------------------------------------------------------------

    async def _write(self, session: Session, entry: _Ahead, ctx: CompactContext) -> None:
        sid = session.session_id
        state = self._state(sid)
        request = CompactRequest(direction="all", trigger="auto")
        try:
            async with self._progress() as progress:
                prepared = await engine.summarize(
                    session, request, replace(ctx, progress=progress), view=entry.messages
                )
        except asyncio.CancelledError:
            self._decline(session, entry, "cancelled")
            raise
        except BatonError as exc:
            self._decline(session, entry, exc.message)
            return
        except Exception as exc:  # a summary is an optimisation: the threshold still works
            self._decline(session, entry, type(exc).__name__)
            return
        if state.entry is entry:
            entry.prepared = prepared
            log.info("session %s: the summary written ahead is ready", sid)

    @contextlib.asynccontextmanager
    async def _progress(self) -> AsyncIterator[Progress | None]:
        scope = self._scope()
        if scope is None:
            yield None
            return
        async with scope(TITLE) as progress:
            yield progress

    def _decline(self, session: Session, entry: _Ahead, why: str) -> None:
        sid = session.session_id
        state = self._state(sid)
        if state.entry is entry:
            state.entry = None
            state.declined = entry.active
            log.info("session %s: no summary written ahead (%s)", sid, why)
