"""Auto-compact: threshold, recursion guard, microcompact first, and the circuit breaker."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from baton.core.compaction import engine
from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.automatic.outcome import AutoOutcome
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.hooks import Hook, Hooks
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer, Progress, SummaryRequest
from baton.core.conversation.messages import MessageInput, ToolResultBlock, ToolUseBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import CompactionInProgress
from baton.core.settings import AutoCompactSettings, KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage

# threshold 13,400 tokens, blocking limit 15,400
SMALL = Settings(
    context_window=20_000,
    keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=2_000),
)


class BrokenSummarizer:
    name = "broken"

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        raise RuntimeError("the summary service is down")


class SpyCompact:
    """The real engine, counting its calls."""

    def __init__(self) -> None:
        self.calls: list[CompactRequest] = []

    async def __call__(
        self, session: Session, request: CompactRequest, ctx: CompactContext
    ) -> CompactResult:
        self.calls.append(request)
        return await engine.compact(session, request, ctx)


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("auto", "claude-haiku-4-5")


def words(count: int) -> str:
    return " ".join(f"word{i % 10}" for i in range(count))


def fill(session: Session, turns: int, size: int = 1_200) -> None:
    for turn in range(turns):
        session.append(
            [
                MessageInput(role="user", content=f"request {turn}: {words(size)}"),
                MessageInput(role="assistant", content=f"answer {turn}: {words(size)}"),
            ]
        )


def factory(
    estimator: Estimator, settings: Settings = SMALL, broken: bool = False
) -> Callable[[], CompactContext]:
    def make() -> CompactContext:
        summarizer = BrokenSummarizer() if broken else ExtractiveSummarizer(estimator.count_text)
        return CompactContext(settings, estimator, summarizer)

    return make


def used(session: Session, estimator: Estimator, settings: Settings = SMALL) -> int:
    return compute_usage(session, settings, estimator).used_tokens


async def test_below_the_threshold_nothing_happens(session: Session, estimator: Estimator) -> None:
    fill(session, 2)
    spy = SpyCompact()
    auto = AutoCompactor(factory(estimator), compact=spy)
    assert await auto.check(session, reason="append") is None
    assert spy.calls == [] and session.compactions == 0


async def test_at_the_threshold_it_compacts_all_with_trigger_auto(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    assert used(session, estimator) >= 13_400
    result = await AutoCompactor(factory(estimator)).check(session, reason="send")
    assert result is not None
    assert (result.direction, result.trigger, result.summarizer) == ("all", "auto", "extractive")
    assert session.compactions == 1
    assert used(session, estimator) < 13_400


async def test_a_single_huge_message_that_jumps_past_the_threshold_triggers_it(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 1, size=200)
    assert used(session, estimator) < 13_400
    session.append([MessageInput(role="user", content=words(12_000))])
    result = await AutoCompactor(factory(estimator)).check(session, reason="append")
    assert result is not None and result.trigger == "auto"
    assert session.view_messages()[0].kind == "summary"


async def test_what_an_auto_compaction_left_is_measured_as_it_commits(
    session: Session, estimator: Estimator, tmp_path: Path
) -> None:
    """The commit is announced before the PostCompact hooks end, and the client may append
    meanwhile: a large append then is the next check's to handle, not a failure of this
    compaction (it was counted as one when measured after the hooks)."""
    started, release = tmp_path / "started", tmp_path / "release"
    held = (
        f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\n"
        f"while not pathlib.Path({str(release)!r}).exists():\n    time.sleep(0.02)\n"
    )
    hooks = Hooks(post=[Hook([sys.executable, "-c", held])])
    summarizer = ExtractiveSummarizer(estimator.count_text)
    seen: list[int] = []
    make = factory(estimator)

    def contexts() -> CompactContext:
        return replace(make(), summarizer=summarizer, hooks=hooks, committed=told)

    def told(result: CompactResult) -> None:
        seen.append(used(session, estimator))

    auto = AutoCompactor(contexts)
    fill(session, 6)
    check = asyncio.ensure_future(auto.check(session, reason="append"))
    deadline = time.monotonic() + 20
    while not started.exists():
        assert time.monotonic() < deadline, "the PostCompact hook never started"
        await asyncio.sleep(0.02)
    fill(session, 6)  # appended while the hook runs: past the threshold again
    release.touch()
    result = await check
    assert result is not None and seen and seen[0] < 13_400
    assert auto.failures(session.session_id) == 0 and auto.last_error(session.session_id) is None


async def test_no_compaction_while_one_runs(session: Session, estimator: Estimator) -> None:
    fill(session, 6)
    spy = SpyCompact()
    auto = AutoCompactor(factory(estimator), compact=spy)
    session.compacting = True  # a summary request is in flight
    assert await auto.check(session, reason="append") is None
    assert spy.calls == []


async def test_disabled_auto_compact_does_nothing(session: Session, estimator: Estimator) -> None:
    fill(session, 6)
    settings = SMALL.model_copy(update={"auto_compact": AutoCompactSettings(enabled=False)})
    spy = SpyCompact()
    auto = AutoCompactor(factory(estimator, settings), compact=spy)
    assert await auto.check(session, reason="send") is None
    assert spy.calls == [] and session.compactions == 0


async def test_three_failures_open_the_breaker_and_a_manual_compact_closes_it(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 5, size=700)
    assert 13_400 <= used(session, estimator) < 15_400  # over the threshold, not blocked
    spy = SpyCompact()
    use = [factory(estimator, broken=True)]
    auto = AutoCompactor(lambda: use[0](), compact=spy)
    for attempt in range(1, 4):
        assert await auto.check(session, reason="send") is None  # the turn goes on
        assert auto.failures(session.session_id) == attempt
    assert auto.paused(session.session_id)
    assert "summary service is down" in (auto.last_error(session.session_id) or "")
    paused_usage = compute_usage(session, SMALL, estimator, auto_paused=True)
    assert paused_usage.auto_compact_paused and paused_usage.state == "error"

    assert await auto.check(session, reason="send") is None
    assert len(spy.calls) == 3  # paused: no fourth attempt

    manual = CompactContext(SMALL, estimator, ExtractiveSummarizer(estimator.count_text))
    await engine.compact(session, CompactRequest(), manual)
    auto.reset(session.session_id)  # what the server does after a manual compaction
    assert not auto.paused(session.session_id)
    fill(session, 6)
    use[0] = factory(estimator)  # the summary service is back
    assert await auto.check(session, reason="send") is not None
    assert len(spy.calls) == 4 and auto.failures(session.session_id) == 0


async def test_a_success_clears_earlier_failures(session: Session, estimator: Estimator) -> None:
    fill(session, 6)
    broken = factory(estimator, broken=True)
    working = factory(estimator)
    use = [broken]
    auto = AutoCompactor(lambda: use[0]())
    await auto.check(session, reason="send")
    await auto.check(session, reason="send")
    assert auto.failures(session.session_id) == 2
    use[0] = working
    assert await auto.check(session, reason="send") is not None
    assert auto.failures(session.session_id) == 0 and not auto.paused(session.session_id)


async def test_a_compaction_already_running_elsewhere_is_not_a_failure(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)

    async def busy(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult:
        raise CompactionInProgress("busy")

    auto = AutoCompactor(factory(estimator), compact=busy)
    for _ in range(4):
        assert await auto.check(session, reason="send") is None
    assert auto.failures(session.session_id) == 0


async def test_microcompact_runs_first_and_can_make_compaction_unnecessary(
    session: Session, estimator: Estimator
) -> None:
    session.append([MessageInput(role="user", content="read all the modules")])
    for n in range(12):
        call = ToolUseBlock(id=f"toolu_{n}", name="Read", input={"file_path": f"m{n}.py"})
        result = ToolResultBlock(tool_use_id=f"toolu_{n}", content=words(600))
        session.append(
            [
                MessageInput(role="assistant", content=[call], api_message_id=f"r{n}"),
                MessageInput(role="user", content=[result]),
            ]
        )
    assert used(session, estimator) >= 13_400
    later = datetime.now(UTC) + timedelta(hours=2)  # the prompt cache is surely cold
    spy = SpyCompact()

    auto = AutoCompactor(factory(estimator), compact=spy, clock=lambda: later)
    result = await auto.check(session, reason="send")
    assert result is not None and result.direction == "microcompact"
    assert spy.calls == []
    assert used(session, estimator) < 13_400


class GatedSummarizer:
    """The extractive summarizer, held until the test opens the gate."""

    name = "gated"

    def __init__(self, estimator: Estimator) -> None:
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.inner = ExtractiveSummarizer(estimator.count_text)
        self.nested: list[CompactResult | None] = []
        self.auto: AutoCompactor | None = None
        self.session: Session | None = None

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        self.entered.set()
        if self.auto is not None and self.session is not None:
            # a check from inside the summary request must return at once, not deadlock
            self.nested.append(await self.auto.check(self.session, reason="append"))
        await self.gate.wait()
        return await self.inner.summarize(request, progress)


async def test_a_check_during_a_running_auto_compaction_waits_for_it(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    gated = GatedSummarizer(estimator)
    spy = SpyCompact()
    auto = AutoCompactor(lambda: CompactContext(SMALL, estimator, gated), compact=spy)
    gated.auto, gated.session = auto, session

    after_append = asyncio.create_task(auto.check(session, reason="append"))
    await asyncio.wait_for(gated.entered.wait(), 10)
    before_send = asyncio.create_task(auto.check(session, reason="send"))
    for _ in range(20):
        await asyncio.sleep(0)  # give the second check every chance to run ahead
    assert not before_send.done()  # it waits instead of letting the send find a full context
    assert gated.nested == [None]

    gated.gate.set()
    first = await after_append
    second = await before_send
    assert first is not None and second is None
    assert len(spy.calls) == 1 and session.compactions == 1
    assert used(session, estimator) < 13_400


class WordySummarizer:
    """A summary that barely condenses: the text it was given, less its last `trim` characters."""

    name = "wordy"

    def __init__(self, trim: int = 1_500) -> None:
        self.trim = trim

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        text = "\n\n".join(m.text() for m in request.messages)
        return text[: len(text) - self.trim]


async def test_an_auto_compaction_that_stays_over_the_threshold_counts_as_a_failure(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 5, size=740)
    assert 14_500 <= used(session, estimator) < 15_400
    spy = SpyCompact()
    wordy = WordySummarizer()
    auto = AutoCompactor(lambda: CompactContext(SMALL, estimator, wordy), compact=spy)
    for attempt in range(1, 4):
        before = used(session, estimator)
        result = await auto.check(session, reason="append")
        assert result is not None and session.compactions == attempt  # it did compact...
        assert before > used(session, estimator) >= 13_400  # ...but not under the threshold
        assert auto.failures(session.session_id) == attempt
    assert auto.paused(session.session_id)
    assert "threshold" in (auto.last_error(session.session_id) or "")
    assert await auto.check(session, reason="append") is None
    assert len(spy.calls) == 3  # paused: no compaction on every append


async def test_a_long_session_of_many_prompts_auto_compacts_under_the_threshold(
    session: Session, estimator: Estimator
) -> None:
    settings = Settings()  # the 200K window, threshold 167,000
    session.append(
        [
            message
            for n in range(1_500)
            for message in (
                MessageInput(role="user", content=f"Step {n}: " + "check the next part " * 30),
                MessageInput(role="assistant", content=f"Checked part {n}."),
            )
        ]
    )
    threshold = compute_usage(session, settings, estimator).auto_compact_threshold
    assert used(session, estimator, settings) >= threshold
    auto = AutoCompactor(factory(estimator, settings))
    result = await auto.check(session, reason="append")
    assert result is not None and result.post_tokens < threshold
    assert used(session, estimator, settings) < threshold
    assert auto.failures(session.session_id) == 0


async def test_every_attempt_tells_its_outcome_in_one_sentence(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 5, size=700)
    assert 13_400 <= used(session, estimator) < 15_400  # over the threshold, not blocked
    use = [factory(estimator, broken=True)]
    auto = AutoCompactor(lambda: use[0]())
    told: list[tuple[str, AutoOutcome]] = []
    auto.on_outcome = lambda sid, outcome: told.append((sid, outcome))
    await auto.check(session, reason="send")
    sid, failed = told[-1]
    assert sid == session.session_id and failed.outcome == "failed"
    assert failed.tokens_before == failed.tokens_after == used(session, estimator)
    assert "summary service is down" in failed.message
    assert "the request goes out with" in failed.message

    await auto.check(session, reason="append")  # after an append nothing goes out
    assert "tokens are still in use" in told[-1][1].message
    await auto.check(session, reason="send")  # the third failure pauses it, and says so
    assert "paused until a manual compaction" in told[-1][1].message

    auto.reset(session.session_id)
    use[0] = factory(estimator)
    assert await auto.check(session, reason="send") is not None
    compacted = told[-1][1]
    assert compacted.outcome == "compacted"
    assert compacted.tokens_after == used(session, estimator) < compacted.tokens_before
    # and what went: the messages summarized, the tool results cleared, facts lost
    went = compacted.dropped
    assert went is not None and went.messages_summarized > 0
    assert went.text.startswith(f"Summarized {went.messages_summarized:,} messages")
    # the figure after it is the meter's, estimated until the next reply: said so, as the
    # panel's notice of a manual compaction says it
    assert compacted.message == (
        f"Auto-compacted: {compacted.tokens_before:,} -> {compacted.tokens_after:,} tokens "
        f"(estimated). {went.text}."
    )


async def test_a_failure_over_the_blocking_limit_says_the_send_is_refused(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    assert used(session, estimator) >= 15_400  # over the blocking limit
    auto = AutoCompactor(factory(estimator, broken=True))
    told: list[AutoOutcome] = []
    auto.on_outcome = lambda _sid, outcome: told.append(outcome)
    await auto.check(session, reason="send")
    assert "the send is refused" in told[-1].message
    assert "over the limit of 15,400" in told[-1].message


async def test_a_listener_that_fails_never_stops_the_turn(
    session: Session, estimator: Estimator
) -> None:
    fill(session, 6)
    auto = AutoCompactor(factory(estimator))

    def broken(_sid: str, _outcome: AutoOutcome) -> None:
        raise RuntimeError("listener down")

    auto.on_outcome = broken
    assert await auto.check(session, reason="send") is not None
    assert session.compactions == 1
