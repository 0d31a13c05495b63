"""Each change's one event: the usage computed once, `SessionChanged` raised, then the work
that follows the change (an exact count, the session notes, auto-compact after an append)."""

from __future__ import annotations

from typing import Protocol

from baton.core.background import Background
from baton.core.model_api.exact_counts import with_exact_count
from baton.core.service.events import Events, Reason, SessionChanged
from baton.core.service.model_access import ModelAccess
from baton.core.service.runtime import Runtimes, SessionRuntime
from baton.core.service.upkeep import Upkeep
from baton.core.settings import Settings
from baton.core.usage.budget import Usage, budget_for, compute_usage
from baton.core.usage.estimator import Estimator

GROWN = ("append", "reply", "create")  # changes that leave a summary written ahead fresh


class Settled(Protocol):
    """What the events read of the service: its settings (replaced by `configure`) and
    the pieces every usage is computed with."""

    settings: Settings
    estimator: Estimator
    models: ModelAccess
    background: Background


class Changes:
    def __init__(self, host: Settled, runtimes: Runtimes, events: Events, upkeep: Upkeep) -> None:
        self._host = host
        self._runtimes = runtimes
        self._events = events
        self._upkeep = upkeep

    def usage(self, runtime: SessionRuntime) -> Usage:
        """The usage to show: estimated (or anchored on the last reply's real usage), or
        the API's exact count when `exactCounts` fetched one for the view as it is."""
        settings = self._host.settings
        session = runtime.session
        model = session.model or settings.model
        limits = self._host.models.limits(model, settings, self.limits_arrived)
        usage = compute_usage(
            session,
            settings,
            self._host.estimator,
            tools_tokens=runtime.tools_tokens,
            auto_paused=self._upkeep.auto.paused(runtime.session_id),
            api_limits=limits,
            memo=runtime.usage,
        )
        exact = self._upkeep.exact_figure(runtime)
        if exact is not None:
            usage = with_exact_count(usage, exact, budget_for(model, settings, limits)[0])
        return usage

    def state(
        self, runtime: SessionRuntime, reason: Reason | None = None, tell_usage: bool = True
    ) -> SessionChanged:
        """The session as a change leaves it (its usage computed here, once)."""
        sid = runtime.session_id
        paused_by = self._upkeep.auto.paused_by(sid)
        usage = self.usage(runtime)
        return SessionChanged(
            sid, reason, runtime.session, usage, runtime.replying, paused_by, tell_usage
        )

    def changed(self, runtime: SessionRuntime, reason: Reason, tell_usage: bool = True) -> Usage:
        """The one event of a change, then the work that follows it."""
        if reason not in GROWN:
            self._upkeep.reshaped(runtime.session)  # the summary written ahead may be stale
        event = self.state(runtime, reason, tell_usage)
        self._events.emit(event)
        self._follow(runtime, reason)
        return event.usage

    def usage_moved(self, session_id: str) -> None:
        """Only the usage moved (settings, model limits, an exact count, the breaker)."""
        runtime = self._runtimes.get(session_id)
        if runtime is not None:
            self._events.emit(self.state(runtime))
            self._follow(runtime, None)

    def _follow(self, runtime: SessionRuntime, reason: Reason | None) -> None:
        host, sid = self._host, runtime.session_id
        self._upkeep.want_exact_count(runtime, lambda: self._count_exactly(sid))
        if reason in ("append", "reply") and host.settings.summarizer == "memory":
            updater = host.models.notes_updater(host.settings, host.estimator)
            work = updater.maybe_update(runtime.session, runtime.notes)
            host.background.spawn(work, "session notes")

    async def auto_check(self, session_id: str, reason: str) -> None:
        """Auto-compact after an append, in the background; its outcome is a change too."""
        outcome = await self._upkeep.auto_check(session_id, reason)
        if outcome == "compacted":
            self.changed(self._runtimes.of(session_id), "compact")
        elif outcome == "paused":
            self.usage_moved(session_id)  # the breaker opened: the meter says so

    async def _count_exactly(self, session_id: str) -> None:
        if await self._upkeep.count_exactly(session_id):
            self.usage_moved(session_id)

    def limits_arrived(self, model: str) -> None:
        for runtime in self._runtimes:
            if (runtime.session.model or self._host.settings.model) == model:
                self.usage_moved(runtime.session_id)
