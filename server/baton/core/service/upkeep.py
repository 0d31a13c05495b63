"""Work the service does on its own after a change: calibration, auto-compact, exact counts.

Upkeep reads the service through `Host` and keeps its per-session state in the sessions'
runtimes; it never announces anything itself: each method says what happened (an
auto-compaction committed, the breaker opened, an exact figure arrived) and the service
raises the one event that follows."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Literal, Protocol

from baton.core.background import Background
from baton.core.compaction.automatic.ahead import AheadState, SummariesAhead
from baton.core.compaction.automatic.auto import AutoCompactor, AutoState
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactResult
from baton.core.compaction.summary.summarizers import Progress, Summarizer
from baton.core.conversation.session import Session
from baton.core.errors import ApiKeyMissing
from baton.core.model_api.exact_counts import ExactCounts, ExactState, Fingerprint, fingerprint
from baton.core.service.events import Events
from baton.core.service.model_access import KeyMissingSummarizer, ModelAccess
from baton.core.service.runtime import Runtimes, SessionRuntime
from baton.core.settings import Settings
from baton.core.usage.budget import Usage, observe_response
from baton.core.usage.estimator import Estimator
from baton.core.usage.usage_memo import UsageMemo

AUTO_COMPACT_TITLE = "Baton: auto-compacting"
Outcome = Literal["compacted", "paused"] | None


class Host(Protocol):
    """What upkeep reads of the service."""

    settings: Settings
    estimator: Estimator
    models: ModelAccess
    background: Background

    def session(self, session_id: str) -> Session: ...

    def usage(self, session_id: str) -> Usage: ...

    def compact_context(
        self,
        progress: Progress | None = None,
        session_id: str | None = None,
        *,
        summarizer: Summarizer | None = None,
    ) -> CompactContext: ...


class Upkeep:
    def __init__(self, host: Host, runtimes: Runtimes, events: Events) -> None:
        self._host = host
        self._runtimes = runtimes
        self._events = events

        def ahead_of(sid: str) -> AheadState:
            runtime = runtimes.get(sid)
            return runtime.ahead if runtime is not None else AheadState()

        def auto_of(sid: str) -> AutoState:
            runtime = runtimes.get(sid)
            return runtime.auto if runtime is not None else AutoState()

        def exact_of(sid: str) -> ExactState:
            runtime = runtimes.get(sid)
            return runtime.exact if runtime is not None else ExactState()

        def memo_of(sid: str) -> UsageMemo | None:
            runtime = runtimes.get(sid)
            return runtime.usage if runtime is not None else None

        # summaries written ahead run as background work with their own progress
        self.ahead = SummariesAhead(host.background.spawn, lambda: events.progress, ahead_of)
        self.auto = AutoCompactor(host, ahead=self.ahead, states=auto_of, memos=memo_of)
        self.exact = ExactCounts(host.background, states=exact_of)

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

    # ---- the summary written ahead, auto-compact -----------------------------------------

    def after_reply(self, session_id: str) -> None:
        """A reply may have brought usage past the point where the summary is written ahead."""
        try:
            context = self._host.compact_context(None, session_id)
        except ApiKeyMissing:
            return  # nothing can write a model summary ahead without a key
        self.auto.start_ahead(self._host.session(session_id), context)

    def reshaped(self, session: Session) -> None:
        """A change other than an append may make the summary written ahead stale."""
        self.ahead.check(session)

    async def auto_check(self, session_id: str, reason: str) -> Outcome:
        """Auto-compact if needed, with progress when it is going to compact: "compacted"
        when it did, "paused" when the breaker opened instead."""
        session = self._host.session(session_id)
        was_paused = self.auto.paused(session_id)
        scope = self._events.progress
        if scope is not None and self._over_threshold(session):
            async with scope(AUTO_COMPACT_TITLE) as progress:
                outcome = await self._auto_run(session, reason, progress)
        else:
            outcome = await self._auto_run(session, reason, None)
        if outcome is not None:
            return "compacted"
        return "paused" if self.auto.paused(session_id) != was_paused else None

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
        if self.auto.paused(session.session_id):
            return False
        usage = self._host.usage(session.session_id)
        return usage.used_tokens >= usage.auto_compact_threshold

    # ---- exact counts (setting `exactCounts`) --------------------------------------------

    def fingerprint(self, runtime: SessionRuntime) -> Fingerprint:
        model = runtime.session.model or self._host.settings.model
        return fingerprint(runtime.session, model, runtime.tools)

    def exact_figure(self, runtime: SessionRuntime) -> int | None:
        if not self._host.settings.exact_counts:
            return None
        return self.exact.figure(runtime.session_id, self.fingerprint(runtime))

    def want_exact_count(
        self, runtime: SessionRuntime, counted: Callable[[], Coroutine[Any, Any, Any]]
    ) -> None:
        """After a change: ask the API for the exact figure, debounced, off the hot path;
        `counted()` is what runs then (it calls `count_exactly` and says what it found)."""
        if not (self._host.settings.exact_counts and self._host.models.has_key):
            return
        self.exact.request(runtime.session_id, self.fingerprint(runtime), counted)

    async def count_exactly(self, session_id: str) -> bool:
        """Count the view now; True when a new figure for it was kept."""
        host = self._host
        runtime = self._runtimes.get(session_id)
        if runtime is None or not host.settings.exact_counts:
            return False  # deleted, or the setting went off, while the count waited
        session = host.session(session_id)
        model = session.model or host.settings.model
        client = host.models.client(host.settings)
        return await self.exact.count(session, model, runtime.tools, client)
