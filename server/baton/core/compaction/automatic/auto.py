"""Auto-compact: when to compact on its own (before a send, after an append), and how: the
summary written ahead when it is ready, else a compaction of the whole view. Whether a
usage calls for it is in due.py; its guards (the circuit breaker, the thrash guard) and
the telling of each attempt are in guards.py.
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
from baton.core.compaction.automatic.due import compaction_due, over, refused
from baton.core.compaction.automatic.guards import (
    MAX_FAILURES,
    REFILL_TURNS,
    THRASH_LIMIT,
    AutoGuards,
)
from baton.core.compaction.automatic.outcome import OutcomeListener, StartListener
from baton.core.compaction.commit import report
from baton.core.compaction.dropped import Dropped
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import new_id
from baton.core.conversation.request_bytes import media_pivot
from baton.core.conversation.session import Session
from baton.core.errors import BatonError, CompactionInProgress, SessionLocked
from baton.core.settings import MicrocompactSettings
from baton.core.usage.budget import Usage
from baton.core.usage.session_usage import compute_usage

log = logging.getLogger(__name__)

__all__ = [
    "MAX_FAILURES",
    "REFILL_TURNS",
    "THRASH_LIMIT",
    "AutoCompactor",
    "CompactFn",
]

CompactFn = Callable[[Session, CompactRequest, CompactContext], Awaitable[CompactResult]]
MicrocompactFn = Callable[..., Boundary | None]
ContextFactory = Callable[[], CompactContext]


class AutoCompactor(AutoGuards):
    """One per server; remembers, per session, how many auto-compacts failed in a row.

    `check` runs before every send and after every append: recursion guard -> circuit
    breaker -> microcompact -> compact (`all`, trigger `auto`) when usage is at or over
    the auto-compact threshold. Failures (as guards.py says) never reach the
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
        if compaction_due(usage):
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
        if not compaction_due(usage):
            if self.ahead is not None:
                self.ahead.maybe_start(
                    session, ctx, usage.used_tokens, usage.auto_compact_threshold
                )
            return micro_result
        sid = session.session_id
        before, limit = usage.used_tokens, usage.blocking_limit
        state = self._state(sid)
        guard = (state.last_auto, state.refills)  # an attempt called off leaves them be
        if self._thrashing(session, usage):
            detail = self.last_error(sid) or ""
            # a request over the API's bytes is refused, whatever its tokens: say so
            self._tell(sid, "failed", (before, before, limit), detail, reason, None, refused(usage))
            return micro_result
        media = over(usage)  # the span holding the images goes, whatever the tokens
        log.info(
            "auto-compacting session %s (%s): %d tokens, threshold %d%s",
            sid,
            reason,
            usage.used_tokens,
            usage.auto_compact_threshold,
            ", a request over the API's bytes" if media else "",
        )
        last = session.active[-1] if session.active else None
        # what the compaction left, measured as it commits: the client hears of the commit
        # then, and may append before the PostCompact hooks end (no refill of this one)
        left: list[tuple[Usage, int]] = []

        def committed(result: CompactResult) -> None:
            left.append((self._usage(session, ctx), len(session.view)))
            if ctx.committed is not None:
                ctx.committed(result)

        boundary_id = new_id("cmp")
        self.started(sid, reason, boundary_id)
        try:
            told = replace(ctx, committed=committed)
            result = await self._compact_now(session, told, boundary_id, media)
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
            detail = self.last_error(sid) or ""
            self._tell(sid, "failed", (before, before, limit), detail, reason, None, refused(usage))
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
        why = refused(after)
        if why is not None:
            # Committed, but its request is still over the API's bytes: the send is refused.
            self._fail(sid, f"auto-compaction left {why.removeprefix('its ')}")
            figures_after = (before, after.used_tokens, limit)
            detail = self.last_error(sid) or ""
            self._tell(sid, "failed", figures_after, detail, reason, None, why)
            return
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

    async def _compact_now(
        self, session: Session, ctx: CompactContext, boundary_id: str, media: bool
    ) -> CompactResult:
        """The summary written ahead when it is ready and fresh, else a new compaction; the
        hooks run around either (a PreCompact that blocks fails it as any failure). It
        commits as `boundary_id`, the id its start was told with. With `media` (a request
        over the API's bytes) it summarizes up to the last message holding an image or a
        document (`media_pivot`), which `all` may keep verbatim in its recent window."""
        pivot = media_pivot(session.view_messages()) if media else None
        if pivot is not None:
            request = CompactRequest(
                direction="up_to", pivot_message_id=pivot, trigger="auto", boundary_id=boundary_id
            )
            return await self._compact(session, request, ctx)
        prepared = None
        if self.ahead is not None:
            if self.ahead.running(session.session_id):
                report(ctx, "Waiting for the summary written ahead", None)
            prepared = await self.ahead.take(session, ctx.summarizer.name)
        if prepared is not None:  # one no longer smaller gives way to a new one, in its frame
            prepared.request = replace(prepared.request, boundary_id=boundary_id)
            return await engine.compact_prepared(session, prepared, ctx)
        request = CompactRequest(direction="all", trigger="auto", boundary_id=boundary_id)
        return await self._compact(session, request, ctx)

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
