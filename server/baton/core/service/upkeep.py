"""Auto-compact in the background after a change, and the summary written ahead of it.

Upkeep keeps its per-session state in the sessions' runtimes and never announces anything
itself: `auto_check` says what happened (an auto-compaction committed, the breaker opened)
and the service raises the one event that follows."""

from __future__ import annotations

from typing import Literal, Protocol

from baton.core.background import Background
from baton.core.compaction.automatic.ahead import SummariesAhead
from baton.core.compaction.automatic.auto import AutoCompactor, CompactFn
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactResult
from baton.core.compaction.summary.summarizers import Progress, Summarizer
from baton.core.conversation.session import Session
from baton.core.errors import ApiKeyMissing
from baton.core.service.events import AutoCompacted, AutoCompactStarted, Events
from baton.core.service.model_access import KeyMissingSummarizer
from baton.core.service.runtime import Runtimes, SessionRuntime

AUTO_COMPACT_TITLE = "Baton: auto-compacting"
Outcome = Literal["compacted", "paused"] | None


class ContextOf(Protocol):
    """The compaction context for a session's work (the service's `compaction.context`)."""

    def __call__(
        self,
        progress: Progress | None = None,
        session_id: str | None = None,
        *,
        summarizer: Summarizer | None = None,
    ) -> CompactContext: ...


class Upkeep:
    def __init__(
        self,
        background: Background,
        context_of: ContextOf,
        runtimes: Runtimes,
        events: Events,
        compact: CompactFn | None = None,
    ) -> None:
        self._context_of = context_of
        self._events = events
        # summaries written ahead run as background work with their own progress
        self.ahead = SummariesAhead(background.spawn, lambda: events.progress, runtimes.ahead_of)
        self.auto = AutoCompactor(
            context_of,
            ahead=self.ahead,
            states=runtimes.auto_of,
            memos=runtimes.memo_of,
            on_start=lambda sid, reason, boundary_id: events.emit(
                AutoCompactStarted(sid, reason, boundary_id)
            ),
            on_outcome=lambda sid, outcome: events.emit(AutoCompacted(sid, outcome)),
            compact=compact,
        )

    def after_reply(self, runtime: SessionRuntime) -> None:
        """A reply may have brought usage past the point where the summary is written ahead."""
        try:
            context = self._context_of(None, runtime.session_id)
        except ApiKeyMissing:
            return  # nothing can write a model summary ahead without a key
        self.auto.start_ahead(runtime.session, context)

    def reshaped(self, session: Session) -> None:
        """A change other than an append may make the summary written ahead stale."""
        self.ahead.check(session)

    async def auto_check(self, runtime: SessionRuntime, reason: str, over: bool) -> Outcome:
        """Auto-compact if needed, with progress when it is going to compact (`over`: the
        usage is at or past the threshold): "compacted" when it did, "paused" when the
        breaker opened instead."""
        session = runtime.session
        was_paused = self.auto.paused(session.session_id)
        scope = self._events.progress
        if scope is not None and over and self._may_run(session):
            async with scope(AUTO_COMPACT_TITLE) as progress:
                outcome = await self._auto_run(session, reason, progress)
        else:
            outcome = await self._auto_run(session, reason, None)
        if outcome is not None:
            return "compacted"
        return "paused" if self.auto.paused(session.session_id) != was_paused else None

    def _may_run(self, session: Session) -> bool:
        return not (session.compacting or session.read_only or self.auto.paused(session.session_id))

    async def _auto_run(
        self, session: Session, reason: str, progress: Progress | None
    ) -> CompactResult | None:
        session_id = session.session_id
        try:
            context = self._context_of(progress, session_id)
        except ApiKeyMissing:
            # the anthropic summarizer chosen without a key: the attempt fails inside the
            # compaction, so the breaker counts it and, after repeated failures, the meter
            # and the diagnostics tell the user (not just a log line on every append)
            keyless = KeyMissingSummarizer()
            context = self._context_of(progress, session_id, summarizer=keyless)
        return await self.auto.check(session, reason=reason, context=context)
