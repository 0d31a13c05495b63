"""Summaries written ahead of auto-compact: start point, hand-over at the threshold, staleness,
cancel and failure; and the thrash guard that stops auto-compact."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Coroutine
from typing import Any

import pytest

from baton.core.compaction import engine
from baton.core.compaction.automatic.ahead import SummariesAhead, start_point
from baton.core.compaction.automatic.auto import REFILL_TURNS, THRASH_LIMIT, AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.hooks import Hook, Hooks
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer, Progress, SummaryRequest
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import AutoCompactSettings, KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage

# threshold 13,400 tokens: the summary starts at 80% of it, 10,720
SMALL = Settings(
    context_window=20_000,
    keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=2_000),
)
THRESHOLD = 13_400


class GatedSummarizer:
    """A model summarizer stand-in: each summary waits for `gate`, then answers."""

    name = "anthropic"

    def __init__(self, fail: bool = False) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.calls: list[SummaryRequest] = []
        self.fail = fail

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        self.calls.append(request)
        self.started.set()
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        if self.fail:
            raise RuntimeError("the summary service is down")
        return f"Summary number {len(self.calls)} of {len(request.messages)} messages."


class Tasks:
    """The spawn function the service's Background would be: keeps the tasks to await."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[Any]] = []

    def __call__(self, work: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.append(task)
        return task

    async def settle(self) -> None:
        await asyncio.gather(*self.tasks, return_exceptions=True)


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("ahead", "claude-haiku-4-5")


def words(count: int) -> str:
    return " ".join(f"word{i % 10}" for i in range(count))


def turn(session: Session, n: int, size: int = 400) -> None:
    session.append(
        [
            MessageInput(role="user", content=f"request {n}: {words(size)}"),
            MessageInput(role="assistant", content=f"answer {n}: {words(size)}"),
        ]
    )


def used(session: Session, estimator: Estimator, settings: Settings = SMALL) -> int:
    return compute_usage(session, settings, estimator).used_tokens


def fill_to(session: Session, estimator: Estimator, tokens: int, start: int = 0) -> int:
    """Append turns until usage reaches `tokens`; returns the next turn number."""
    n = start
    while used(session, estimator) < tokens:
        turn(session, n)
        n += 1
    return n


def setup(
    estimator: Estimator, summarizer: Any, settings: Settings = SMALL, hooks: Hooks | None = None
) -> tuple[AutoCompactor, SummariesAhead, Tasks]:
    tasks = Tasks()
    ahead = SummariesAhead(tasks, lambda: None)
    auto = AutoCompactor(
        lambda: CompactContext(settings, estimator, summarizer, hooks=hooks), ahead=ahead
    )
    return auto, ahead, tasks


async def started_ahead(
    session: Session, estimator: Estimator
) -> tuple[GatedSummarizer, AutoCompactor, SummariesAhead, Tasks, int]:
    """A summary ahead under way: the session filled to 80% of the threshold and checked,
    the summary waiting on its gate; with the next turn's number."""
    summarizer = GatedSummarizer()
    auto, ahead, tasks = setup(estimator, summarizer)
    n = fill_to(session, estimator, int(THRESHOLD * 0.8))
    await auto.check(session, reason="append")
    return summarizer, auto, ahead, tasks, n


# ---- the start point ---------------------------------------------------------------------


def test_the_start_point_is_off_for_offline_summarizers_and_80_percent_for_model_ones() -> None:
    default = AutoCompactSettings()
    assert start_point(default, "extractive", 10_000) is None
    assert start_point(default, "memory", 10_000) is None
    assert start_point(default, "anthropic", 10_000) == 8_000
    assert start_point(default, "server", 10_000) == 8_000
    assert start_point(AutoCompactSettings(background_percent=0), "anthropic", 10_000) is None
    assert start_point(AutoCompactSettings(background_percent=50), "extractive", 10_000) == 5_000


def test_a_bad_background_percent_keeps_the_default() -> None:
    from baton.core.settings_read import parse_settings

    warnings: list[str] = []
    parsed = parse_settings({"autoCompact": {"backgroundPercent": 100}}, warnings.append)
    assert parsed.auto_compact.background_percent is None
    assert warnings and "backgroundPercent" in warnings[0]
    parsed = parse_settings({"autoCompact": {"backgroundPercent": 60}})
    assert parsed.auto_compact.background_percent == 60


# ---- hand-over at the threshold ----------------------------------------------------------


async def test_the_summary_starts_at_80_percent_and_is_committed_at_the_threshold(
    session: Session, estimator: Estimator
) -> None:
    summarizer = GatedSummarizer()
    auto, ahead, tasks = setup(estimator, summarizer)
    n = fill_to(session, estimator, int(THRESHOLD * 0.8))
    assert used(session, estimator) < THRESHOLD
    assert await auto.check(session, reason="append") is None
    await summarizer.started.wait()
    snapshot = list(session.view)

    # the conversation goes on while the summary is written
    late_turn = n
    turn(session, late_turn, size=100)
    late = session.view[len(snapshot) :]
    summarizer.gate.set()
    await tasks.settle()
    assert ahead.ready(session.session_id) and session.compactions == 0

    fill_to(session, estimator, THRESHOLD, start=n + 1)
    result = await auto.check(session, reason="append")
    assert result is not None and result.trigger == "auto"
    assert len(summarizer.calls) == 1  # the summary written ahead, no second request
    assert "Summary number 1" in (result.summary or "")
    assert result.summarized_message_ids + result.kept_message_ids == snapshot
    view = session.view
    assert session.messages[view[0]].kind == "summary"
    assert view[view.index(late[0]) : view.index(late[0]) + len(late)] == late  # kept, in order
    assert used(session, estimator) < THRESHOLD


async def test_a_summary_committed_after_late_turns_replays_to_the_same_view_and_undoes(
    tmp_path: Any, estimator: Estimator
) -> None:
    store = SessionStore(tmp_path / "replay", estimator.count_message)
    session = store.create("ahead", "claude-haiku-4-5")
    summarizer = GatedSummarizer()
    auto, _, tasks = setup(estimator, summarizer)
    n = fill_to(session, estimator, int(THRESHOLD * 0.8))
    before = list(session.view)
    await auto.check(session, reason="append")
    turn(session, n, size=50)  # while the summary is written
    summarizer.gate.set()
    await tasks.settle()
    fill_to(session, estimator, THRESHOLD, start=n + 1)
    everything = list(session.view)
    result = await auto.check(session, reason="append")
    assert result is not None
    view = list(session.view)
    store.close()

    again = SessionStore(tmp_path / "replay", estimator.count_message)
    reopened = again.get(session.session_id)
    assert reopened.view == view  # the late turns stay after the summary on replay too
    engine.uncompact(reopened, result.boundary_id)
    assert reopened.view == everything and reopened.view[: len(before)] == before
    again.close()


async def test_at_the_threshold_a_summary_still_being_written_is_awaited(
    session: Session, estimator: Estimator
) -> None:
    summarizer, auto, ahead, _, n = await started_ahead(session, estimator)
    await summarizer.started.wait()
    fill_to(session, estimator, THRESHOLD, start=n)
    check = asyncio.ensure_future(auto.check(session, reason="send"))
    await asyncio.sleep(0)  # let the check reach the wait (no timing involved)
    assert not check.done()
    summarizer.gate.set()
    result = await check
    assert result is not None and len(summarizer.calls) == 1
    assert session.compactions == 1 and not ahead.ready(session.session_id)


async def test_no_summary_is_written_ahead_when_the_setting_is_zero_or_offline(
    session: Session, estimator: Estimator
) -> None:
    off = SMALL.model_copy(update={"auto_compact": AutoCompactSettings(background_percent=0)})
    summarizer = GatedSummarizer()
    auto, _, tasks = setup(estimator, summarizer, off)
    fill_to(session, estimator, int(THRESHOLD * 0.9))
    await auto.check(session, reason="append")
    assert tasks.tasks == [] and summarizer.calls == []

    offline, _, tasks = setup(estimator, ExtractiveSummarizer(estimator.count_text))
    await offline.check(session, reason="append")
    assert tasks.tasks == []


# ---- staleness ---------------------------------------------------------------------------


async def test_a_pin_in_the_snapshot_makes_the_summary_stale_and_it_is_dropped(
    session: Session, estimator: Estimator
) -> None:
    summarizer, auto, ahead, tasks, n = await started_ahead(session, estimator)
    summarizer.gate.set()
    await tasks.settle()
    assert ahead.ready(session.session_id)

    session.set_pinned(session.view[1], True)
    ahead.check(session)
    assert not ahead.ready(session.session_id)
    fill_to(session, estimator, THRESHOLD, start=n)
    result = await auto.check(session, reason="append")
    assert result is not None and len(summarizer.calls) == 2  # a new summary, with the pin
    assert session.view[1] not in result.summarized_message_ids


async def test_a_compaction_while_the_summary_is_written_cancels_it(
    session: Session, estimator: Estimator
) -> None:
    summarizer, _, ahead, tasks, _ = await started_ahead(session, estimator)
    await summarizer.started.wait()
    offline = CompactContext(SMALL, estimator, ExtractiveSummarizer(estimator.count_text))
    await engine.compact(session, CompactRequest(direction="all"), offline)
    ahead.check(session)  # what the service does after every compaction
    await tasks.settle()
    assert summarizer.cancelled.is_set() and not ahead.ready(session.session_id)


async def test_an_undo_of_an_earlier_compaction_makes_the_summary_stale(
    session: Session, estimator: Estimator
) -> None:
    summarizer = GatedSummarizer()
    auto, ahead, tasks = setup(estimator, summarizer)
    n = fill_to(session, estimator, THRESHOLD // 2)
    offline = CompactContext(SMALL, estimator, ExtractiveSummarizer(estimator.count_text))
    earlier = await engine.compact(session, CompactRequest(direction="all"), offline)
    n = fill_to(session, estimator, int(THRESHOLD * 0.8), start=n)
    await auto.check(session, reason="append")
    summarizer.gate.set()
    await tasks.settle()
    assert ahead.ready(session.session_id)
    # the undo brings back what the earlier summary stood for; nobody tells the summaries
    # ahead here, so the check at the threshold must notice
    engine.uncompact(session, earlier.boundary_id)
    fill_to(session, estimator, THRESHOLD, start=n)
    result = await auto.check(session, reason="append")
    assert result is not None
    assert len(summarizer.calls) == 2 and "Summary number 2" in (result.summary or "")
    assert earlier.summarized_message_ids[0] in result.summarized_message_ids


async def test_a_manual_compaction_drops_the_summary_even_when_it_is_undone_later(
    session: Session, estimator: Estimator
) -> None:
    summarizer, auto, ahead, tasks, n = await started_ahead(session, estimator)
    summarizer.gate.set()
    await tasks.settle()
    offline = CompactContext(SMALL, estimator, ExtractiveSummarizer(estimator.count_text))
    done = await engine.compact(session, CompactRequest(direction="all"), offline)
    ahead.check(session)
    assert not ahead.ready(session.session_id)  # dropped at the compaction, as it must be
    engine.uncompact(session, done.boundary_id)
    fill_to(session, estimator, THRESHOLD, start=n)
    assert await auto.check(session, reason="append") is not None
    assert len(summarizer.calls) == 2


# ---- the compaction hooks ----------------------------------------------------------------


async def ready_at_threshold(
    session: Session, estimator: Estimator, hooks: Hooks
) -> tuple[GatedSummarizer, AutoCompactor]:
    """A summary written ahead and ready, the session filled to the threshold since."""
    summarizer = GatedSummarizer()
    auto, ahead, tasks = setup(estimator, summarizer, hooks=hooks)
    n = fill_to(session, estimator, int(THRESHOLD * 0.8))
    await auto.check(session, reason="append")
    summarizer.gate.set()
    await tasks.settle()
    assert ahead.ready(session.session_id)
    fill_to(session, estimator, THRESHOLD, start=n)
    return summarizer, auto


async def test_a_pre_hook_that_blocks_the_summary_written_ahead_fails_the_auto_compaction(
    session: Session, estimator: Estimator
) -> None:
    """It was committed without running the hooks (nor holding the compacting flag)."""
    block = [sys.executable, "-c", "import sys; print('frozen', file=sys.stderr); sys.exit(2)"]
    summarizer, auto = await ready_at_threshold(session, estimator, Hooks(pre=[Hook(block)]))
    view, sid = list(session.view), session.session_id
    assert await auto.check(session, reason="append") is None
    assert session.view == view and session.compactions == 0 and not session.compacting
    error = auto.last_error(sid) or ""
    assert auto.failures(sid) == 1 and "PreCompact hook" in error and "frozen" in error
    assert len(summarizer.calls) == 1  # no new summary after the block


async def test_instructions_a_pre_hook_adds_make_the_summary_written_ahead_give_way(
    session: Session, estimator: Estimator, tmp_path: Any
) -> None:
    """The summary was written before the hook gave its instructions: a new one, in the
    same compaction, follows them; the PostCompact hook is told of that one."""
    adds = [sys.executable, "-c", 'print(\'{"instructions": "Keep the SQL verbatim."}\')']
    told = tmp_path / "post.json"
    post = [sys.executable, "-c", f"import sys; open({str(told)!r}, 'w').write(sys.stdin.read())"]
    hooks = Hooks(pre=[Hook(adds)], post=[Hook(post)])
    summarizer, auto = await ready_at_threshold(session, estimator, hooks)
    result = await auto.check(session, reason="append")
    assert result is not None and session.compactions == 1 and not session.compacting
    assert len(summarizer.calls) == 2 and "Summary number 2" in (result.summary or "")
    assert "Keep the SQL verbatim." in (summarizer.calls[1].instructions or "")
    payload = json.loads(told.read_text())
    assert payload["trigger"] == "auto"
    assert payload["result"]["boundaryId"] == result.boundary_id


# ---- cancel and failure ------------------------------------------------------------------


async def test_a_cancelled_summary_is_not_restarted_and_the_threshold_compacts_as_usual(
    session: Session, estimator: Estimator
) -> None:
    summarizer, auto, _, tasks, n = await started_ahead(session, estimator)
    await summarizer.started.wait()
    tasks.tasks[0].cancel()  # the client's cancel button on its progress
    await tasks.settle()
    turn(session, n, size=20)
    await auto.check(session, reason="append")
    assert len(tasks.tasks) == 1  # not started again for the same compactions
    summarizer.gate.set()
    fill_to(session, estimator, THRESHOLD, start=n + 1)
    result = await auto.check(session, reason="append")
    assert result is not None and len(summarizer.calls) == 2
    assert auto.failures(session.session_id) == 0


async def test_a_failed_summary_ahead_is_no_auto_compact_failure(
    session: Session, estimator: Estimator
) -> None:
    summarizer = GatedSummarizer(fail=True)
    auto, ahead, tasks = setup(estimator, summarizer)
    fill_to(session, estimator, int(THRESHOLD * 0.8))
    summarizer.gate.set()
    await auto.check(session, reason="append")
    await tasks.settle()
    assert not ahead.ready(session.session_id)
    assert auto.failures(session.session_id) == 0 and not auto.paused(session.session_id)


async def test_forgetting_a_session_cancels_its_summary(
    session: Session, estimator: Estimator
) -> None:
    summarizer, _, ahead, tasks, _ = await started_ahead(session, estimator)
    await summarizer.started.wait()
    ahead.forget(session.session_id)
    await tasks.settle()
    assert summarizer.cancelled.is_set()


# ---- the thrash guard --------------------------------------------------------------------


def refill(session: Session, n: int, turns: int = 1) -> None:
    """Turns whose tool output alone nearly fills the window again."""
    for i in range(turns):
        big = words(11_000) if i == turns - 1 else "short"
        session.append(
            [
                MessageInput(role="user", content=f"read the log {n}.{i}: {big}"),
                MessageInput(role="assistant", content=f"read it {n}.{i}"),
            ]
        )


async def test_three_refills_in_a_row_stop_auto_compact_and_a_manual_compaction_resumes_it(
    session: Session, estimator: Estimator
) -> None:
    auto, _, _ = setup(estimator, ExtractiveSummarizer(estimator.count_text))
    sid = session.session_id
    fill_to(session, estimator, THRESHOLD)
    assert await auto.check(session, reason="append") is not None
    for n in range(THRASH_LIMIT):
        refill(session, n)
        assert used(session, estimator) >= THRESHOLD
        result = await auto.check(session, reason="append")
        if n < THRASH_LIMIT - 1:
            assert result is not None, n  # refills 1 and 2: compacted again
        assert not auto.paused(sid) or n == THRASH_LIMIT - 1
    assert auto.paused_by(sid) == "thrashing"
    assert session.compactions == THRASH_LIMIT
    assert "refilled past the auto-compact threshold" in (auto.last_error(sid) or "")
    assert await auto.check(session, reason="send") is None  # stopped: no fourth attempt
    assert session.compactions == THRASH_LIMIT

    auto.reset(sid)  # a manual compaction succeeded
    assert not auto.paused(sid)
    assert await auto.check(session, reason="append") is not None


async def test_a_refill_that_took_more_turns_than_the_limit_does_not_count(
    session: Session, estimator: Estimator
) -> None:
    auto, _, _ = setup(estimator, ExtractiveSummarizer(estimator.count_text))
    fill_to(session, estimator, THRESHOLD)
    await auto.check(session, reason="append")
    for n in range(THRASH_LIMIT + 1):
        refill(session, n, turns=REFILL_TURNS + 1)
        assert await auto.check(session, reason="append") is not None
    assert auto.paused_by(session.session_id) is None
    assert session.compactions == THRASH_LIMIT + 2


def test_the_usage_line_says_why_auto_compact_stopped() -> None:
    from baton.lsp.session_document.diagnostics import thrashing_message, usage_message

    usage = compute_usage_for_test()
    stopped = usage.model_copy(update={"auto_compact_paused": True, "state": "error"})
    assert usage_message(stopped, "thrashing").endswith(
        "auto-compact stopped: the working set does not fit"
    )
    assert "repeated failures" in usage_message(stopped, "failures")
    text = thrashing_message(stopped)
    assert f"{stopped.auto_compact_threshold:,} tokens" in text
    assert f"within {REFILL_TURNS} turns" in text and "Compact manually" in text


def compute_usage_for_test() -> Any:
    from baton.core.usage.budget import Breakdown, Usage

    return Usage(
        session_id="s",
        model="m",
        context_window=20_000,
        effective_window=16_000,
        auto_compact_threshold=THRESHOLD,
        warning_threshold=9_000,
        error_threshold=THRESHOLD,
        blocking_limit=15_400,
        used_tokens=14_000,
        percent_used=70.0,
        percent_left=0,
        state="error",
        estimated=True,
        auto_compact_enabled=True,
        auto_compact_paused=False,
        breakdown=Breakdown(
            system=0, tools=0, messages=14_000, summary=0, attachments=0, unattributed=0, free=6_000
        ),
    )


async def test_a_failed_auto_compaction_breaks_the_row_of_refills(
    session: Session, estimator: Estimator
) -> None:
    fail_next = [False]

    async def compact(s: Session, request: CompactRequest, ctx: CompactContext) -> Any:
        if fail_next[0]:
            fail_next[0] = False
            raise RuntimeError("the summary service is down")
        return await engine.compact(s, request, ctx)

    offline = ExtractiveSummarizer(estimator.count_text)
    auto = AutoCompactor(lambda: CompactContext(SMALL, estimator, offline), compact=compact)
    sid = session.session_id
    fill_to(session, estimator, THRESHOLD)
    await auto.check(session, reason="append")
    refill(session, 0)  # refill 1, compacted
    assert await auto.check(session, reason="append") is not None
    fail_next[0] = True
    refill(session, 1)  # refill 2: its compaction fails
    assert await auto.check(session, reason="append") is None
    assert auto.failures(sid) == 1 and not auto.paused(sid)
    assert await auto.check(session, reason="append") is not None  # compacted after all
    refill(session, 2)  # a new row starts: refill 1 of it, not 3
    assert await auto.check(session, reason="append") is not None
    assert auto.paused_by(sid) is None
