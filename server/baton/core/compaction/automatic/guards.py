"""Auto-compact's two guards, and how each attempt is told.

The circuit breaker: a failure is an auto-compaction that raised (the summarizer failed,
the summary would not make the context smaller, ...) or one that committed but left the
usage still at or over the auto-compact threshold: that one would otherwise run again on
every append, each time summarizing the previous summary. An auto-compaction that gets
under the threshold clears the count; three failures in a row pause auto-compact.

The thrash guard: an auto-compaction that worked but whose context refilled past the
threshold (or whose request refilled past the API's 32 MB) within REFILL_TURNS turns
(assistant responses) is a refill; THRASH_LIMIT refills in a row mean the working set does
not fit in the window (or in one request), and auto-compact stops rather than summarize
the same work again every few turns. Either pause lasts until a manual compaction
succeeds.

Each attempt that starts its work is told (`started`), then exactly one outcome (`_tell`).
"""

from __future__ import annotations

import asyncio
import logging

from baton.core.compaction.automatic.auto_state import StateOf
from baton.core.compaction.automatic.outcome import (
    Outcome,
    OutcomeListener,
    StartListener,
    told,
)
from baton.core.compaction.dropped import Dropped
from baton.core.conversation.meta_records import AutoPause, PausedBy
from baton.core.conversation.session import Session
from baton.core.errors import BatonError, CompactionInProgress, SessionLocked
from baton.core.usage.budget import Usage

log = logging.getLogger(__name__)

MAX_FAILURES = 3
REFILL_TURNS = 3  # a refill within this many turns of an auto-compaction counts
THRASH_LIMIT = 3  # refills in a row that stop auto-compact


class AutoGuards:
    """The breaker, the thrash guard and the telling of `AutoCompactor`, per session."""

    _state: StateOf
    max_failures: int
    on_outcome: OutcomeListener | None  # told after every attempt
    on_start: StartListener | None  # told when an attempt starts its work

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

    # ---- the telling ---------------------------------------------------------------------

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

    def started(self, session_id: str, reason: str, boundary_id: str) -> None:
        """Tell the listener an attempt starts its work (`reason`: what started it, `idle`
        for an idle compaction; `boundary_id`: the id it commits under); exactly one
        outcome (`_tell`) follows."""
        if self.on_start is None:
            return
        try:
            self.on_start(session_id, reason, boundary_id)
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
        over_bytes: str | None = None,
    ) -> None:
        """Tell the listener what this attempt did (`figures`: the tokens before and after
        it and the blocking limit; `over_bytes`: why its request is still refused for its
        size, when it is)."""
        if self.on_outcome is None:
            return
        paused = self.paused_by(session_id)
        said = told(outcome, figures, detail, reason, paused, dropped, over_bytes)
        try:
            self.on_outcome(session_id, said)
        except Exception:  # a listener's failure never stops the turn
            log.exception("auto-compact listener failed")

    # ---- the guards ----------------------------------------------------------------------

    def _thrashing(self, session: Session, usage: Usage) -> bool:
        """Count a refill (the threshold, or the API's 32 MB, reached again within
        REFILL_TURNS turns of the last auto-compaction: `usage` is the view's now); True,
        and auto-compact stops, at THRASH_LIMIT in a row."""
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
        threshold = usage.auto_compact_threshold
        size = usage.request_size
        if usage.used_tokens < threshold and size is not None and size.over:
            # the images and documents, not the tokens: the threshold is far off
            refilled = "the images and documents sent refilled the request past the API's 32 MB"
        else:
            refilled = f"the context refilled past the auto-compact threshold of {threshold:,}"
        state.last_error = (
            f"{refilled} within {REFILL_TURNS} turns of each of the last {THRASH_LIMIT} "
            "auto-compactions"
        )
        log.warning(
            "auto-compact of session %s is thrashing (%s); stopped until a manual compaction",
            sid,
            state.last_error,
        )
        return True

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
