"""Auto-compact: when to compact on its own, and the two guards that stop it.

The circuit breaker: a failure is an auto-compaction that raised (the summarizer failed,
the summary would not make the context smaller, ...) or one that committed but left the
usage still at or over the auto-compact threshold: that one would otherwise run again on
every append, each time summarizing the previous summary. An auto-compaction that gets
under the threshold clears the count; three failures in a row pause auto-compact.

The thrash guard: an auto-compaction that worked but whose context refilled past the
threshold within REFILL_TURNS turns (assistant responses) is a refill; THRASH_LIMIT
refills in a row mean the working set does not fit in the window, and auto-compact stops
rather than summarize the same work again every few turns. Either pause lasts until a
manual compaction succeeds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime

from baton.core.compaction import engine
from baton.core.compaction.automatic import microcompact as micro
from baton.core.compaction.automatic.ahead import SummariesAhead
from baton.core.compaction.automatic.auto_state import AutoState, MemoOf, StateOf
from baton.core.compaction.automatic.outcome import (
    Outcome,
    OutcomeListener,
    StartListener,
    told,
)
from baton.core.compaction.commit import report
from baton.core.compaction.dropped import Dropped
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.meta_records import AutoPause, PausedBy
from baton.core.conversation.session import Session
from baton.core.errors import BatonError, CompactionInProgress, SessionLocked
from baton.core.settings import MicrocompactSettings
from baton.core.usage.budget import Usage, compute_usage

log = logging.getLogger(__name__)

MAX_FAILURES = 3
REFILL_TURNS = 3  # a refill within this many turns of an auto-compaction counts
THRASH_LIMIT = 3  # refills in a row that stop auto-compact

CompactFn = Callable[[Session, CompactRequest, CompactContext], Awaitable[CompactResult]]
MicrocompactFn = Callable[..., Boundary | None]
ContextFactory = Callable[[], CompactContext]


class AutoCompactor:
    """One per server; remembers, per session, how many auto-compacts failed in a row.

    `check` runs before every send and after every append: recursion guard -> circuit
    breaker -> microcompact -> compact (`all`, trigger `auto`) when usage is at or over
    the auto-compact threshold. Failures (as the module docstring says) never reach the
    caller: the turn goes on, and after `max_failures` in a row the breaker opens
    (`paused`) until a manual compaction (`reset`); a success before that clears them.
    """

    def __init__(
        self,
        contexts: ContextFactory,
        *,
        max_failures: int = MAX_FAILURES,
        compact: CompactFn | None = None,
        microcompact: MicrocompactFn | None = None,
        clock: Callable[[], datetime] | None = None,
        ahead: SummariesAhead | None = None,
        states: StateOf | None = None,
        memos: MemoOf | None = None,
        on_outcome: OutcomeListener | None = None,
        on_start: StartListener | None = None,
    ) -> None:
        self._contexts = contexts  # the service's `compaction.context`
        self.max_failures = max_failures
        self._compact: CompactFn = compact or engine.compact
        self._microcompact: MicrocompactFn = microcompact or micro.microcompact
        self._clock = clock
        self.ahead = ahead
        # each session's state, from its owner (the service's runtimes), or kept here when
        # the compactor stands alone
        own: dict[str, AutoState] = {}
        self._state: StateOf = states or (lambda sid: own.setdefault(sid, AutoState()))
        self._memo: MemoOf = memos or (lambda sid: None)  # the sessions' usage memos
        self.on_outcome = on_outcome  # told after every attempt
        self.on_start = on_start  # told when an attempt starts its work: its outcome follows

    # ---- the breaker ---------------------------------------------------------------------

    def paused(self, session_id: str) -> bool:
        """True once auto-compact gave up on this session (shown as Usage.autoCompactPaused)."""
        return self.paused_by(session_id) is not None

    def paused_by(self, session_id: str) -> PausedBy | None:
        """Why auto-compact gave up on this session: repeated failures, or thrashing."""
        state = self._state(session_id)
        if state.thrashing:
            return "thrashing"
        return "failures" if state.failures >= self.max_failures else None

    def failures(self, session_id: str) -> int:
        return self._state(session_id).failures

    def last_error(self, session_id: str) -> str | None:
        return self._state(session_id).last_error

    def reset(self, session_id: str, session: Session | None = None) -> None:
        """Close the breaker and the thrash guard (a manual compaction succeeded); the
        `session`'s transcript, if it recorded a pause, records that it ended."""
        self._state(session_id).reset()
        if session is not None:
            self._keep_pause(session)

    def _keep_pause(self, session: Session) -> None:
        """Record a pause that started or ended in the transcript, so that a restart keeps
        auto-compact paused (it would try again, and pay for a summary each time)."""
        sid = session.session_id
        by = self.paused_by(sid)
        pause = AutoPause(by, self.last_error(sid) or "") if by is not None else None
        if (pause and pause.by) == (session.auto_pause and session.auto_pause.by):
            return
        try:
            session.keep_auto_pause(pause)
        except BatonError as exc:  # read-only, or the file changed: a restart may try again
            log.warning("auto-compact's pause of %s is not recorded: %s", sid, exc.message)

    # ---- the check -----------------------------------------------------------------------

    def start_ahead(self, session: Session, ctx: CompactContext) -> bool:
        """Start the summary written ahead if usage passed its start point (after a reply:
        the summary is written while the user reads it, not at the next send)."""
        sid = session.session_id
        if self.ahead is None or session.compacting or session.read_only or self.paused(sid):
            return False
        if not ctx.settings.auto_compact.enabled:
            return False
        usage = self._usage(session, ctx)
        if usage.used_tokens >= usage.auto_compact_threshold:
            return False  # the next check compacts
        return self.ahead.maybe_start(session, ctx, usage.used_tokens, usage.auto_compact_threshold)

    def _usage(self, session: Session, ctx: CompactContext) -> Usage:
        memo = self._memo(session.session_id)
        return compute_usage(
            session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens, memo=memo
        )

    async def before_send(self, session: Session) -> CompactResult | None:
        return await self.check(session, reason="send")

    async def check(
        self, session: Session, *, reason: str, context: CompactContext | None = None
    ) -> CompactResult | None:
        """Compact `session` if it needs it. Returns what changed the view, if anything:
        the compaction's result, or the microcompact's when that alone ran.

        A check that arrives while another auto-compaction of the session runs waits for
        it (a send right after an append must not find the context still full), then
        looks again."""
        sid = session.session_id
        state = self._state(sid)
        if state.holder is not None and state.holder is asyncio.current_task():
            return None  # called from inside a compaction (a summary request): never recurse
        async with state.lock:
            # a compaction someone asked for (or a summary request) is already running
            if session.compacting or session.read_only or self.paused(sid):
                return None
            ctx = context or self._contexts()
            if not ctx.settings.auto_compact.enabled:
                return None
            state.holder = asyncio.current_task()
            try:
                return await self._run(session, ctx, reason)
            finally:
                state.holder = None
                self._keep_pause(session)

    async def _run(
        self, session: Session, ctx: CompactContext, reason: str
    ) -> CompactResult | None:
        micro_result = self._micro(session, ctx.settings.microcompact)
        usage = self._usage(session, ctx)
        if usage.used_tokens < usage.auto_compact_threshold:
            if self.ahead is not None:
                self.ahead.maybe_start(
                    session, ctx, usage.used_tokens, usage.auto_compact_threshold
                )
            return micro_result
        sid = session.session_id
        before, limit = usage.used_tokens, usage.blocking_limit
        state = self._state(sid)
        guard = (state.last_auto, state.refills)  # an attempt called off leaves them be
        if self._thrashing(session, usage.auto_compact_threshold):
            self._tell(sid, "failed", (before, before, limit), self.last_error(sid) or "", reason)
            return micro_result
        log.info(
            "auto-compacting session %s (%s): %d tokens >= threshold %d",
            sid,
            reason,
            usage.used_tokens,
            usage.auto_compact_threshold,
        )
        last = session.active[-1] if session.active else None
        # what the compaction left, measured as it commits: the client hears of the commit
        # then, and may append before the PostCompact hooks end (no refill of this one)
        left: list[tuple[Usage, int]] = []

        def committed(result: CompactResult) -> None:
            left.append((self._usage(session, ctx), len(session.view)))
            if ctx.committed is not None:
                ctx.committed(result)

        self.started(sid, reason)
        try:
            result = await self._compact_now(session, replace(ctx, committed=committed))
        except (CompactionInProgress, SessionLocked, asyncio.CancelledError) as exc:
            newest = session.active[-1] if session.active else None
            if newest is not None and newest != last:
                # cancelled after the commit: the compaction stands
                self._settle(session, ctx, reason, (before, limit), (newest, None), left)
            else:
                # cancelled (the turn, the progress, the server), or someone else compacts or
                # writes: not a failure, and nothing changed (the thrash guard's count neither)
                state.last_auto, state.refills = guard
                self._tell(sid, "cancelled", (before, before, limit), "", reason)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return micro_result
        except Exception as exc:  # any failure counts towards the breaker; the turn goes on
            self._fail(sid, exc.message if isinstance(exc, BatonError) else type(exc).__name__)
            self._tell(sid, "failed", (before, before, limit), self.last_error(sid) or "", reason)
            return micro_result
        done = (result.boundary_id, result.dropped)
        self._settle(session, ctx, reason, (before, limit), done, left)
        return result

    def _settle(
        self,
        session: Session,
        ctx: CompactContext,
        reason: str,
        figures: tuple[int, int],
        done: tuple[str, Dropped | None],
        left: list[tuple[Usage, int]],
    ) -> None:
        """Count and tell an auto-compaction that committed (`figures`: the tokens before
        it and the blocking limit; `done`: its boundary and what it dropped; `left`: the
        usage and the view's length as it committed, when measured then)."""
        sid = session.session_id
        before, limit = figures
        boundary_id, dropped = done
        after, mark = left[-1] if left else (self._usage(session, ctx), len(session.view))
        if after.used_tokens >= after.auto_compact_threshold:
            # Committed (the view did change), but it did not make room: a failure all the same.
            self._fail(
                sid,
                f"auto-compaction left {after.used_tokens:,} tokens in use, still at or over "
                f"the auto-compact threshold of {after.auto_compact_threshold:,}",
            )
            told_figures = (before, after.used_tokens, limit)
            self._tell(sid, "failed", told_figures, self.last_error(sid) or "", reason)
            return
        state = self._state(sid)
        state.failures, state.last_error = 0, None
        state.last_auto = (boundary_id, mark)
        self._tell(sid, "compacted", (before, after.used_tokens, limit), "", reason, dropped)

    def idle_compacted(
        self, session_id: str, figures: tuple[int, int, int], dropped: Dropped | None
    ) -> None:
        """An idle compaction (`idle.py`, trigger `auto`) made room: a success of auto-compact
        like its own (the failures in a row are cleared), told the same way."""
        state = self._state(session_id)
        state.failures, state.last_error = 0, None
        self._tell(session_id, "compacted", figures, "", "idle", dropped)

    def idle_stopped(
        self, session_id: str, figures: tuple[int, int, int], error: BaseException
    ) -> None:
        """An idle compaction that did not commit: cancelled (the server stopped, or another
        compaction or writer came first) or failed. Neither counts towards the breaker: an
        idle compaction is an extra, and the next send's auto-compact still runs."""
        if isinstance(error, (asyncio.CancelledError, CompactionInProgress, SessionLocked)):
            self._tell(session_id, "cancelled", figures, "", "idle")
        else:
            detail = error.message if isinstance(error, BatonError) else type(error).__name__
            self._tell(session_id, "failed", figures, detail, "idle")

    def started(self, session_id: str, reason: str) -> None:
        """Tell the listener an attempt starts its work (`reason`: what started it, `idle`
        for an idle compaction); exactly one outcome (`_tell`) follows."""
        if self.on_start is None:
            return
        try:
            self.on_start(session_id, reason)
        except Exception:  # a listener's failure never stops the turn
            log.exception("auto-compact listener failed")

    def _tell(
        self,
        session_id: str,
        outcome: Outcome,
        figures: tuple[int, int, int],
        detail: str,
        reason: str,
        dropped: Dropped | None = None,
    ) -> None:
        """Tell the listener what this attempt did (`figures`: the tokens before and after
        it and the blocking limit)."""
        if self.on_outcome is None:
            return
        said = told(outcome, figures, detail, reason, self.paused(session_id), dropped)
        try:
            self.on_outcome(session_id, said)
        except Exception:  # a listener's failure never stops the turn
            log.exception("auto-compact listener failed")

    async def _compact_now(self, session: Session, ctx: CompactContext) -> CompactResult:
        """The summary written ahead when it is ready and fresh, else a new compaction; the
        hooks run around either (a PreCompact that blocks fails it as any failure)."""
        prepared = None
        if self.ahead is not None:
            if self.ahead.running(session.session_id):
                report(ctx, "Waiting for the summary written ahead", None)
            prepared = await self.ahead.take(session, ctx.summarizer.name)
        if prepared is not None:  # one no longer smaller gives way to a new one, in its frame
            return await engine.compact_prepared(session, prepared, ctx)
        return await self._compact(session, CompactRequest(direction="all", trigger="auto"), ctx)

    def _thrashing(self, session: Session, threshold: int) -> bool:
        """Count a refill (the threshold reached again within REFILL_TURNS turns of the last
        auto-compaction); True, and auto-compact stops, at THRASH_LIMIT in a row."""
        sid = session.session_id
        state = self._state(sid)
        if state.last_auto is None:  # the last attempt failed: no refill, and no row
            state.refills = 0
            return False
        boundary_id, mark = state.last_auto
        state.last_auto = None
        turns = _turns(session, mark)
        if boundary_id not in session.active or turns > REFILL_TURNS:
            state.refills = 0
            return False
        state.refills += 1
        if state.refills < THRASH_LIMIT:
            return False
        state.thrashing = True
        state.last_error = (
            f"the context refilled past the auto-compact threshold of {threshold:,} within "
            f"{REFILL_TURNS} turns of each of the last {THRASH_LIMIT} auto-compactions"
        )
        log.warning(
            "auto-compact of session %s is thrashing (%s); stopped until a manual compaction",
            sid,
            state.last_error,
        )
        return True

    def _micro(self, session: Session, settings: MicrocompactSettings) -> CompactResult | None:
        try:
            if self._clock is not None:
                boundary = self._microcompact(session, settings, now=self._clock())
            else:
                boundary = self._microcompact(session, settings)
        except Exception as exc:  # clearing old results is an optimisation: never fatal
            detail = exc.message if isinstance(exc, BatonError) else type(exc).__name__
            log.warning("microcompact of session %s failed: %s", session.session_id, detail)
            return None
        if boundary is None:
            return None
        return CompactResult.from_boundary(boundary, None)

    def _fail(self, session_id: str, detail: str) -> None:
        state = self._state(session_id)
        state.failures += 1
        state.last_error = detail
        if state.failures >= self.max_failures:
            log.warning(
                "auto-compact of session %s failed %d times in a row (%s); paused until a "
                "manual compaction",
                session_id,
                state.failures,
                state.last_error,
            )
        else:
            log.info("auto-compact of session %s failed: %s", session_id, state.last_error)


def _turns(session: Session, mark: int) -> int:
    """Assistant responses in the view after position `mark` (records of one response,
    which share an API message id, count once)."""
    seen: set[str] = set()
    turns = 0
    for mid in session.view[mark:]:
        message = session.messages[mid]
        if message.role != "assistant":
            continue
        if message.api_message_id is None or message.api_message_id not in seen:
            turns += 1
        if message.api_message_id is not None:
            seen.add(message.api_message_id)
    return turns
