"""Auto-compact: when to compact on its own, and the circuit breaker that stops it retrying.

A failure, for the breaker, is an auto-compaction that raised (the summarizer failed, the
summary would not make the context smaller, ...) or one that committed but left the usage
still at or over the auto-compact threshold: that one would otherwise run again on every
append, each time summarizing the previous summary. An auto-compaction that gets under
the threshold clears the count; three failures in a row pause auto-compact until a manual
compaction succeeds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, cast

from baton.core.boundary import Boundary
from baton.core.budget import compute_usage
from baton.core.compaction import engine
from baton.core.compaction import microcompact as micro
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.errors import BatonError, CompactionInProgress, SessionLocked
from baton.core.session import Session
from baton.core.settings import MicrocompactSettings

log = logging.getLogger(__name__)

MAX_FAILURES = 3

CompactFn = Callable[[Session, CompactRequest, CompactContext], Awaitable[CompactResult]]
MicrocompactFn = Callable[..., Boundary | None]
ContextFactory = Callable[[], CompactContext]


class ContextHost(Protocol):
    """Anything that can build the compaction context (the server's facade does)."""

    def compact_context(self) -> CompactContext: ...


@dataclass
class _State:
    failures: int = 0
    last_error: str | None = None


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
        contexts: ContextFactory | ContextHost,
        *,
        max_failures: int = MAX_FAILURES,
        compact: CompactFn | None = None,
        microcompact: MicrocompactFn | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        # a host object (the server's facade) or a plain factory function
        self._contexts = cast(ContextFactory, getattr(contexts, "compact_context", contexts))
        self.max_failures = max_failures
        self._compact: CompactFn = compact or engine.compact
        self._microcompact: MicrocompactFn = microcompact or micro.microcompact
        self._clock = clock
        self._states: dict[str, _State] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._holders: dict[str, asyncio.Task[Any] | None] = {}

    # ---- the breaker ---------------------------------------------------------------------

    def paused(self, session_id: str) -> bool:
        """True once auto-compact gave up on this session (shown as Usage.autoCompactPaused)."""
        state = self._states.get(session_id)
        return state is not None and state.failures >= self.max_failures

    def failures(self, session_id: str) -> int:
        state = self._states.get(session_id)
        return state.failures if state else 0

    def last_error(self, session_id: str) -> str | None:
        state = self._states.get(session_id)
        return state.last_error if state else None

    def reset(self, session_id: str) -> None:
        """Close the breaker (a manual compaction succeeded, or the session went away)."""
        self._states.pop(session_id, None)

    # ---- the check -----------------------------------------------------------------------

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
        holder = self._holders.get(sid)
        if holder is not None and holder is asyncio.current_task():
            return None  # called from inside a compaction (a summary request): never recurse
        lock = self._locks.setdefault(sid, asyncio.Lock())
        async with lock:
            # a compaction someone asked for (or a summary request) is already running
            if session.compacting or session.read_only or self.paused(sid):
                return None
            ctx = context or self._contexts()
            if not ctx.settings.auto_compact.enabled:
                return None
            self._holders[sid] = asyncio.current_task()
            try:
                return await self._run(session, ctx, reason)
            finally:
                self._holders.pop(sid, None)

    async def _run(
        self, session: Session, ctx: CompactContext, reason: str
    ) -> CompactResult | None:
        micro_result = self._micro(session, ctx.settings.microcompact)
        usage = compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
        if usage.used_tokens < usage.auto_compact_threshold:
            return micro_result
        sid = session.session_id
        log.info(
            "auto-compacting session %s (%s): %d tokens >= threshold %d",
            sid,
            reason,
            usage.used_tokens,
            usage.auto_compact_threshold,
        )
        try:
            result = await self._compact(
                session, CompactRequest(direction="all", trigger="auto"), ctx
            )
        except (CompactionInProgress, SessionLocked):
            return micro_result  # someone else is compacting or writing: not a failure
        except Exception as exc:  # any failure counts towards the breaker; the turn goes on
            self._fail(sid, exc.message if isinstance(exc, BatonError) else type(exc).__name__)
            return micro_result
        after = compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
        if after.used_tokens >= after.auto_compact_threshold:
            # Committed (the view did change), but it did not make room: a failure all the same.
            self._fail(
                sid,
                f"auto-compaction left {after.used_tokens:,} tokens in use, still at or over "
                f"the auto-compact threshold of {after.auto_compact_threshold:,}",
            )
            return result
        self.reset(sid)
        return result

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
        state = self._states.setdefault(session_id, _State())
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
