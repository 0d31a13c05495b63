"""Each change's one event: what the change teaches the estimator, the usage computed once,
`SessionChanged` raised, then the work that follows the change (an exact count, the
session notes, auto-compact after an append, whose outcome is a change of its own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from baton.core.background import Background
from baton.core.conversation.meta_records import PausedBy
from baton.core.model_api.exact_counts import ExactCounts, fingerprint, with_exact_count
from baton.core.service.events import Events, Reason, SessionChanged
from baton.core.service.model_access import ModelAccess
from baton.core.service.runtime import Runtimes, SessionRuntime
from baton.core.service.upkeep import Upkeep
from baton.core.settings import Settings
from baton.core.turn.watch import mark
from baton.core.usage.budget import Usage, budget_for, observe_response
from baton.core.usage.estimator import Estimator
from baton.core.usage.overhead import calibrated_part
from baton.core.usage.session_usage import compute_usage

GROWN = ("append", "reply", "create", "rename")  # changes that leave a summary written ahead fresh


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
        self.exact = ExactCounts(host.background, states=runtimes.exact_of)
        self._factor = host.estimator.factor  # the calibration the open sessions were told with
        runtimes.read_again = self.read_again  # another program's change, told as one

    def appended(self, runtime: SessionRuntime, message_ids: Sequence[str]) -> Usage:
        """An append's one event, after what its messages teach the estimator."""
        self._learn(runtime, message_ids)
        return self.changed(runtime, "append")

    def _learn(self, runtime: SessionRuntime, message_ids: Sequence[str]) -> None:
        """An appended assistant message with the API's real usage calibrates the estimator,
        as a reply streamed through `send` does (observe_response skips any other message).
        Records of one response share its usage, so each response teaches once."""
        session, responses = runtime.session, set[str]()
        for message_id in message_ids:
            api_id = session.get(message_id).api_message_id
            if api_id is None or api_id not in responses:
                observe_response(
                    session, message_id, self._host.estimator, tools_tokens=runtime.tools_tokens
                )
            if api_id is not None:
                responses.add(api_id)

    def usage(self, runtime: SessionRuntime) -> Usage:
        """The usage to show: estimated (or anchored on the last reply's real usage), or
        the API's exact count when `exactCounts` fetched one for the view as it is."""
        return self._usage(runtime, self._upkeep.auto.paused_by(runtime.session_id))

    def _usage(self, runtime: SessionRuntime, paused_by: PausedBy | None) -> Usage:
        settings = self._host.settings
        session = runtime.session
        model = session.model or settings.model
        limits = self._host.models.limits(model, settings, self.limits_arrived)
        usage = compute_usage(
            session,
            settings,
            self._host.estimator,
            tools_tokens=runtime.tools_tokens,
            auto_paused=paused_by is not None,
            api_limits=limits,
            paused_by=paused_by,
            memo=runtime.usage,
        )
        exact = None
        if settings.exact_counts:
            exact = self.exact.figure(
                runtime.session_id, fingerprint(session, model, runtime.tools)
            )
        if exact is not None:
            usage = with_exact_count(usage, exact, budget_for(model, settings, limits)[0])
        return usage

    def state(
        self, runtime: SessionRuntime, reason: Reason | None = None, tell_usage: bool = True
    ) -> SessionChanged:
        """The session as a change leaves it (its usage computed here, once)."""
        paused_by = self._upkeep.auto.paused_by(runtime.session_id)
        usage = self._usage(runtime, paused_by)
        return SessionChanged(
            runtime.session_id,
            reason,
            runtime.session,
            usage,
            runtime.replying,
            paused_by,
            tell_usage,
        )

    def changed(self, runtime: SessionRuntime, reason: Reason, tell_usage: bool = True) -> Usage:
        """The one event of a change, then the work that follows it."""
        if self._runtimes.get(runtime.session_id) is not runtime:
            return self.usage(runtime)  # deleted while a turn ran: nobody to tell
        if reason not in GROWN:
            self._upkeep.reshaped(runtime.session)  # the summary written ahead may be stale
        event = self.state(runtime, reason, tell_usage)
        runtime.shown = (mark(runtime.session), event.paused_by)
        self._emit(runtime, event)
        self._follow(runtime, reason)
        self.recalibrated()  # what the change taught the estimator moves the others' figures
        return event.usage

    def read_again(self, runtime: SessionRuntime) -> None:
        """The session was read again from its file in a state no change told (a write found
        it changed by another program, `transcript_changed`; a look at a session another
        process writes found it moved on): what the disk holds now is a change of its own."""
        self.changed(runtime, "reload")

    def let_go(self, runtime: SessionRuntime) -> None:
        """The writer of a session held read-only here let go (`WriterWatch`): `reload`
        alone, its view not read again, so no figure is told of it (the writer may have
        written since); a client showing it looks again, and that look tells what it read."""
        if self._runtimes.get(runtime.session_id) is runtime:
            self._events.emit(self.state(runtime, "reload", tell_usage=False))

    def looked(self, runtime: SessionRuntime | None) -> None:
        """A client looked at the session (`get`): read again from its file since (another
        process writes it), it is told as `reload` when it shows another view than the
        client was last told (or, told nothing, than it was read with before), or when it
        is writable now (the writer let go) and the watch did not tell so already."""
        if runtime is None or runtime.reread_from is None:
            return
        before, runtime.reread_from = runtime.reread_from, None
        shown = runtime.shown[0] if runtime.shown is not None else before
        told, runtime.let_go_told = runtime.let_go_told, False
        writable = runtime.reread_read_only and not runtime.session.read_only and not told
        if shown != mark(runtime.session) or writable:
            self.read_again(runtime)

    def caught_up(self, runtime: SessionRuntime, reason: Reason) -> None:
        """Tell what the client has not seen yet of the session after work that may have
        changed it (a turn's step, auto-compact): a new view or compactions as `reason`'s
        change, else auto-compact paused or resumed as a move of the usage. A compaction
        announced itself as it committed, and is not announced again."""
        if self._runtimes.get(runtime.session_id) is not runtime:
            return  # deleted meanwhile: nobody to tell
        shown = runtime.shown
        if shown is None or shown[0] != mark(runtime.session):
            self.changed(runtime, reason)
        elif shown[1] != self._upkeep.auto.paused_by(runtime.session_id):
            self.usage_moved(runtime.session_id)

    def usage_moved(self, session_id: str) -> None:
        """Only the usage moved (settings, model limits, an exact count, the breaker)."""
        runtime = self._runtimes.get(session_id)
        if runtime is not None:
            event = self.state(runtime)
            if runtime.shown is not None:
                runtime.shown = (runtime.shown[0], event.paused_by)
            self._emit(runtime, event)
            self._follow(runtime, None)

    def recalibrated(self) -> None:
        """Once the estimator's factor has moved (a reply taught it, in whichever session),
        every open session whose figure moved with it is told, as `usage_moved`; a figure
        that stands (anchored on a reply with nothing after it) is not told again."""
        factor = self._host.estimator.factor
        if factor == self._factor:
            return
        self._factor = factor
        for runtime in self._runtimes:
            if runtime.told is not None and not calibrated_part(runtime.session):
                continue  # the figure is a reply's real usage alone: it stands as told
            if self.usage(runtime).used_tokens != runtime.told:
                self.usage_moved(runtime.session_id)

    def _emit(self, runtime: SessionRuntime, event: SessionChanged) -> None:
        self._events.emit(event)
        if event.tell_usage:
            runtime.told = event.usage.used_tokens

    def _follow(self, runtime: SessionRuntime, reason: Reason | None) -> None:
        host, sid = self._host, runtime.session_id
        settings = host.settings
        if settings.exact_counts and host.models.has_key:
            # the API's exact figure, debounced, off the hot path
            model = runtime.session.model or settings.model
            current = fingerprint(runtime.session, model, runtime.tools)
            self.exact.request(sid, current, lambda: self._counted(sid))
        if reason in ("append", "reply") and settings.summarizer == "memory":
            updater = host.models.notes_updater(settings, host.estimator)
            work = updater.maybe_update(runtime.session, runtime.notes)
            host.background.spawn(work, "session notes")

    async def auto_check(self, session_id: str, reason: str) -> None:
        """Auto-compact after an append, in the background; its outcome is a change too."""
        runtime = self._runtimes.of(session_id)
        settings = self._host.settings
        over = False
        if settings.auto_compact.enabled:
            usage = self.usage(runtime)
            over = usage.used_tokens >= usage.auto_compact_threshold
        outcome = await self._upkeep.auto_check(runtime, reason, over)
        if outcome == "compacted":  # a compaction told as it committed; a microcompact alone now
            self.caught_up(self._runtimes.of(session_id), "compact")
        elif outcome == "paused":
            self.usage_moved(session_id)  # the breaker opened: the meter says so

    async def count_exactly(self, session_id: str) -> bool:
        """Count the open session's view now; True when a new figure for it was kept."""
        host = self._host
        runtime = self._runtimes.get(session_id)
        if runtime is None or not host.settings.exact_counts:
            return False  # deleted, or the setting went off, while the count waited
        model = runtime.session.model or host.settings.model
        await host.models.client_ready()
        client = host.models.client(host.settings)
        return await self.exact.count(runtime.session, model, runtime.tools, client)

    async def _counted(self, session_id: str) -> None:
        if await self.count_exactly(session_id):
            self.usage_moved(session_id)

    def limits_arrived(self, model: str) -> None:
        for runtime in self._runtimes:
            if (runtime.session.model or self._host.settings.model) == model:
                self.usage_moved(runtime.session_id)
