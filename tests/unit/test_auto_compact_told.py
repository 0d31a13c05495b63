"""Auto-compact tells each attempt that does work twice: when it starts (before its summary
is asked for) and once when it ends, compacted, failed or cancelled. A cancelled attempt
changes nothing: no failure counted, the thrash guard's row as it was."""

from __future__ import annotations

import asyncio

import pytest

from baton.core.compaction import engine
from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import CompactionInProgress
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage

# threshold 13,400 tokens, blocking limit 15,400
SMALL = Settings(
    context_window=20_000,
    keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=2_000),
)


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("told", "claude-haiku-4-5")


def fill(session: Session, turns: int, size: int = 1_200) -> None:
    text = " ".join(f"word{i % 10}" for i in range(size))
    for turn in range(turns):
        session.append(
            [
                MessageInput(role="user", content=f"request {turn}: {text}"),
                MessageInput(role="assistant", content=f"answer {turn}: {text}"),
            ]
        )


def over(session: Session, estimator: Estimator) -> bool:
    usage = compute_usage(session, SMALL, estimator)
    return usage.used_tokens >= usage.auto_compact_threshold


class Compact:
    """The real engine, or (`stuck`) one that hangs until cancelled, after committing when
    `commit_first` (a PostCompact hook still running when the cancel comes)."""

    def __init__(self, told: list[str]) -> None:
        self.told = told
        self.stuck = False
        self.commit_first = False
        self.entered = asyncio.Event()

    async def __call__(
        self, session: Session, request: CompactRequest, ctx: CompactContext
    ) -> CompactResult:
        self.told.append("work")
        if not self.stuck:
            return await engine.compact(session, request, ctx)
        if self.commit_first:
            await engine.compact(session, request, ctx)
        self.entered.set()
        await asyncio.Event().wait()  # until cancelled
        raise AssertionError("never reached")


def compactor(estimator: Estimator) -> tuple[AutoCompactor, Compact, list[str]]:
    told: list[str] = []
    compact = Compact(told)

    def context() -> CompactContext:
        return CompactContext(SMALL, estimator, ExtractiveSummarizer(estimator.count_text))

    auto = AutoCompactor(
        context,
        compact=compact,
        on_start=lambda _sid, reason, _id: told.append(f"start {reason}"),
        on_outcome=lambda _sid, outcome: told.append(outcome.outcome),
    )
    return auto, compact, told


async def cancelled_check(auto: AutoCompactor, compact: Compact, session: Session) -> None:
    check = asyncio.create_task(auto.check(session, reason="send"))
    await asyncio.wait_for(compact.entered.wait(), 10)
    check.cancel()
    with pytest.raises(asyncio.CancelledError):
        await check  # the cancel goes on to the turn


async def test_an_attempt_is_told_when_it_starts_its_work_and_once_when_it_ends(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    auto, _, told = compactor(estimator)
    assert await auto.check(session, reason="send") is not None
    assert told == ["start send", "work", "compacted"]


async def test_a_cancelled_attempt_is_told_cancelled_and_changes_nothing(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    auto, compact, told = compactor(estimator)
    assert await auto.check(session, reason="send") is not None  # the thrash guard's mark
    turns = 0
    while not over(session, estimator):
        fill(session, 1, size=2_000)
        turns += 1
    assert turns <= 3  # a refill: the next attempt counts it
    state = auto._state(session.session_id)
    state.failures, state.last_error = 1, "an earlier failure"
    guard = (state.last_auto, state.refills)
    told.clear()

    compact.stuck = True
    await cancelled_check(auto, compact, session)
    assert told == ["start send", "work", "cancelled"]
    assert session.compactions == 1
    assert (auto.failures(session.session_id), auto.last_error(session.session_id)) == (
        1,
        "an earlier failure",
    )
    assert (state.last_auto, state.refills) == guard
    assert not auto.paused(session.session_id)


async def test_a_cancel_after_the_commit_tells_the_compaction_that_stands(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    auto, compact, told = compactor(estimator)
    compact.stuck = compact.commit_first = True
    await cancelled_check(auto, compact, session)
    assert session.compactions == 1
    assert told == ["start send", "work", "compacted"]


async def test_another_compaction_first_is_told_cancelled_not_failed(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    told: list[str] = []

    async def busy(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult:
        raise CompactionInProgress("busy")

    def context() -> CompactContext:
        return CompactContext(SMALL, estimator, ExtractiveSummarizer(estimator.count_text))

    auto = AutoCompactor(
        context,
        compact=busy,
        on_start=lambda _sid, reason, _id: told.append(f"start {reason}"),
        on_outcome=lambda _sid, outcome: told.append(outcome.outcome),
    )
    assert await auto.check(session, reason="append") is None
    assert told == ["start append", "cancelled"]
    assert auto.failures(session.session_id) == 0


async def test_an_attempt_the_thrash_guard_stops_is_told_its_failure_without_a_start(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    auto, _, told = compactor(estimator)
    state = auto._state(session.session_id)
    assert await auto.check(session, reason="send") is not None
    for _ in range(3):  # refill within a turn, three times in a row
        while not over(session, estimator):
            fill(session, 1, size=6_000)
        told.clear()
        await auto.check(session, reason="send")
    assert state.thrashing
    assert told == ["failed"]


async def test_the_attempt_the_thrash_guard_stops_says_stopped_as_the_meter_does(
    session: Session, estimator: Estimator
) -> None:
    """The thrash guard stops auto-compact: its last attempt's sentence says so in the
    meter's word for that state, not the breaker's "paused"."""
    fill(session, 6)
    auto, _, _ = compactor(estimator)
    messages: list[str] = []
    auto.on_outcome = lambda _sid, outcome: messages.append(outcome.message)
    assert await auto.check(session, reason="send") is not None
    for _ in range(3):  # refill within a turn, three times in a row
        while not over(session, estimator):
            fill(session, 1, size=6_000)
        await auto.check(session, reason="send")
    paused_by = auto.paused_by(session.session_id)
    assert paused_by == "thrashing"
    usage = compute_usage(session, SMALL, estimator, auto_paused=True, paused_by=paused_by)
    assert "; stopped: the working set does not fit." in usage.text.auto_compact
    assert messages[-1].endswith(" Auto-compact is stopped until a manual compaction."), messages
