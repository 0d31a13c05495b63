"""The compaction planner: keep window, pivots per direction, safe cuts, pins."""

from __future__ import annotations

import pytest
from conversations import Convo

from baton.core.compaction.plan import Plan, plan_compaction, safe_cuts
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, text_message
from baton.core.errors import InvalidParams, MessageNotFound, NothingToCompact
from baton.core.settings import KeepWindowSettings

WINDOW = KeepWindowSettings(min_tokens=300, min_text_messages=2, max_tokens=10_000)


def laid_out(plan: Plan, view: list[Message]) -> list[Message]:
    """The view the plan describes, with a stand-in summary message."""
    by_id = {m.id: m for m in view}
    summary = text_message("user", "summary", kind="summary")
    ids = [*plan.keep_before, summary.id, *plan.pinned, *plan.keep_after]
    return [summary if i == summary.id else by_id[i] for i in ids]


def check_partition(plan: Plan, view: list[Message]) -> None:
    ids = [m.id for m in view]
    assert sorted([*plan.summarize, *plan.kept], key=ids.index) == ids
    assert not set(plan.summarize) & set(plan.kept)
    assert plan.summarize == [i for i in ids if i in set(plan.summarize)]
    assert invariant_violations(laid_out(plan, view)) == []


def chat(turns: int) -> Convo:
    c = Convo()
    for n in range(turns):
        c.user(f"question {n}")
        c.reply(f"answer {n}")
    return c


# ---- all -----------------------------------------------------------------------------------


def test_all_keeps_the_recent_window_until_min_tokens_and_min_text_messages() -> None:
    c = chat(4)  # 8 messages of 100 tokens, all with text
    plan = plan_compaction(c.messages, "all", keep_window=WINDOW)
    # walking back: 100, 200, 300 tokens -> 3 messages reach 300 tokens and 2 text messages
    assert plan.keep_after == c.ids[-3:]
    assert plan.summarize == c.ids[:-3]
    assert plan.keep_before == [] and plan.pinned == [] and plan.adjusted_pivot is None
    check_partition(plan, c.messages)


def test_all_keeps_more_messages_until_enough_of_them_carry_text() -> None:
    c = chat(2)
    c.user("read these")
    c.tools("Read", "Read", "Read")  # 6 records, none with text
    c.reply("all read")
    window = KeepWindowSettings(min_tokens=100, min_text_messages=3, max_tokens=10_000)
    plan = plan_compaction(c.messages, "all", keep_window=window)
    # the reply, six tool records, the prompt "read these", then "answer 1" is the 3rd text
    assert plan.keep_after == c.ids[3:]
    check_partition(plan, c.messages)


def test_all_stops_at_max_tokens_even_without_enough_text() -> None:
    c = chat(6)
    window = KeepWindowSettings(min_tokens=100_000, min_text_messages=50, max_tokens=250)
    plan = plan_compaction(c.messages, "all", keep_window=window)
    assert plan.keep_after == c.ids[-2:]  # a third message would take it to 300 > 250


def test_all_summarizes_a_single_message_larger_than_the_whole_window() -> None:
    c = chat(3)
    c.user("read this")
    c.tools("Read")
    c.messages[-1].tokens = 50_000  # a giant tool result, over max_tokens on its own
    window = KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=10_000)
    plan = plan_compaction(c.messages, "all", keep_window=window)
    assert plan.keep_after == []
    assert plan.summarize == c.ids
    check_partition(plan, c.messages)


def test_all_counts_tokens_with_the_given_counter() -> None:
    c = chat(4)
    plan = plan_compaction(c.messages, "all", keep_window=WINDOW, count=lambda m: 1_000)
    assert plan.keep_after == c.ids[-2:]  # one message reaches min tokens; two for text


def test_all_moves_the_cut_earlier_to_keep_a_streamed_response_with_its_results_whole() -> None:
    c = chat(2)
    c.user("look")
    calls = c.tools("Read", "Grep", "Bash")  # a1 r1 a2 r2 a3 r3, one API id
    c.reply("found it")
    window = KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=10_000)
    plan = plan_compaction(c.messages, "all", keep_window=window)
    # 300 tokens would cut between a3 and its result; the whole response stays instead
    assert plan.keep_after[0] == calls[0].id
    assert plan.keep_after == [m.id for m in calls] + [c.ids[-1]]
    check_partition(plan, c.messages)


def test_all_with_nothing_outside_the_window_is_nothing_to_compact() -> None:
    c = chat(1)
    with pytest.raises(NothingToCompact):
        plan_compaction(c.messages, "all", keep_window=WINDOW)


def test_all_refuses_a_pivot() -> None:
    c = chat(4)
    with pytest.raises(InvalidParams):
        plan_compaction(c.messages, "all", c.ids[2], keep_window=WINDOW)


# ---- up_to / from / range -------------------------------------------------------------------


def test_up_to_summarizes_through_the_pivot_and_keeps_the_rest() -> None:
    c = chat(4)
    plan = plan_compaction(c.messages, "up_to", c.ids[3], keep_window=WINDOW)
    assert plan.summarize == c.ids[:4]
    assert plan.keep_after == c.ids[4:]
    assert plan.adjusted_pivot is None
    check_partition(plan, c.messages)


def test_up_to_on_a_tool_call_takes_its_result_along() -> None:
    c = chat(1)
    c.user("run it")
    call, result = c.tools("Bash")
    c.reply("ran")
    plan = plan_compaction(c.messages, "up_to", call.id, keep_window=WINDOW)
    assert plan.summarize[-1] == result.id
    assert plan.adjusted_pivot is not None
    assert (plan.adjusted_pivot.requested, plan.adjusted_pivot.used) == (call.id, result.id)
    assert "later" in plan.adjusted_pivot.why
    check_partition(plan, c.messages)


def test_up_to_inside_a_long_streamed_response_moves_to_the_nearer_side() -> None:
    c = chat(1)
    prompt = c.user("many calls")
    calls = c.tools("Read", "Read", "Read", "Read")  # 8 records
    c.reply("ok")
    plan = plan_compaction(c.messages, "up_to", calls[0].id, keep_window=WINDOW)
    # cutting after the first record: 1 step back vs 7 steps forward
    assert plan.summarize[-1] == prompt.id
    assert plan.adjusted_pivot is not None and "earlier" in plan.adjusted_pivot.why
    check_partition(plan, c.messages)


def test_from_keeps_everything_before_the_pivot() -> None:
    c = chat(4)
    plan = plan_compaction(c.messages, "from", c.ids[4], keep_window=WINDOW)
    assert plan.keep_before == c.ids[:4]
    assert plan.summarize == c.ids[4:]
    assert plan.keep_after == []
    check_partition(plan, c.messages)


def test_from_on_a_tool_result_takes_its_call_into_the_summary() -> None:
    c = chat(1)
    c.user("run it")
    call, result = c.tools("Bash")
    c.reply("ran")
    plan = plan_compaction(c.messages, "from", result.id, keep_window=WINDOW)
    assert plan.summarize[0] == call.id
    assert plan.adjusted_pivot is not None
    assert (plan.adjusted_pivot.requested, plan.adjusted_pivot.used) == (result.id, call.id)
    assert "earlier" in plan.adjusted_pivot.why
    check_partition(plan, c.messages)


def test_range_summarizes_the_span_and_keeps_both_sides() -> None:
    c = chat(5)
    plan = plan_compaction(c.messages, "range", c.ids[2], c.ids[5], keep_window=WINDOW)
    assert plan.keep_before == c.ids[:2]
    assert plan.summarize == c.ids[2:6]
    assert plan.keep_after == c.ids[6:]
    check_partition(plan, c.messages)


def test_range_ending_on_a_tool_call_extends_to_its_result() -> None:
    c = chat(1)
    start = c.user("run it")
    call, result = c.tools("Bash")
    c.reply("ran")
    plan = plan_compaction(c.messages, "range", start.id, call.id, keep_window=WINDOW)
    assert plan.summarize == [start.id, call.id, result.id]
    assert plan.adjusted_pivot is not None
    assert (plan.adjusted_pivot.requested, plan.adjusted_pivot.used) == (call.id, result.id)
    check_partition(plan, c.messages)


def test_range_of_one_message_inside_a_pair_takes_the_pair() -> None:
    c = chat(1)
    c.user("run it")
    call, result = c.tools("Bash")
    c.reply("ran")
    plan = plan_compaction(c.messages, "range", result.id, result.id, keep_window=WINDOW)
    assert plan.summarize == [call.id, result.id]
    check_partition(plan, c.messages)


@pytest.mark.parametrize(
    ("direction", "pivot", "end", "error"),
    [
        ("sideways", None, None, InvalidParams),
        ("up_to", None, None, InvalidParams),
        ("from", None, None, InvalidParams),
        ("range", "m1", None, InvalidParams),
        ("up_to", "m2", "m3", InvalidParams),
        ("range", "m4", "m2", InvalidParams),
        ("up_to", "nope", None, MessageNotFound),
        ("range", "m1", "nope", MessageNotFound),
    ],
)
def test_bad_arguments_are_rejected(
    direction: str, pivot: str | None, end: str | None, error: type[Exception]
) -> None:
    c = chat(3)
    with pytest.raises(error):
        plan_compaction(c.messages, direction, pivot, end, keep_window=WINDOW)


def test_an_empty_view_is_nothing_to_compact() -> None:
    with pytest.raises(NothingToCompact):
        plan_compaction([], "up_to", "m1", keep_window=WINDOW)


# ---- pins and waiting tool calls --------------------------------------------------------------


def test_a_pinned_prompt_inside_the_span_stays_verbatim() -> None:
    c = chat(4)
    c.messages[2].pinned = True
    plan = plan_compaction(c.messages, "up_to", c.ids[5], keep_window=WINDOW)
    assert plan.pinned == [c.ids[2]]
    assert c.ids[2] not in plan.summarize
    assert plan.summarize == [c.ids[i] for i in (0, 1, 3, 4, 5)]
    check_partition(plan, c.messages)


def test_a_pinned_tool_result_keeps_its_whole_response() -> None:
    c = chat(1)
    c.user("look")
    calls = c.tools("Read", "Grep")
    c.reply("found")
    c.user("thanks")
    c.reply("welcome")
    calls[3].pinned = True  # the Grep result
    plan = plan_compaction(c.messages, "from", c.ids[2], keep_window=WINDOW)
    assert plan.pinned == [m.id for m in calls]
    check_partition(plan, c.messages)


def test_a_span_of_only_pinned_messages_is_nothing_to_compact() -> None:
    c = chat(3)
    for message in c.messages[:2]:
        message.pinned = True
    with pytest.raises(NothingToCompact):
        plan_compaction(c.messages, "up_to", c.ids[1], keep_window=WINDOW)


def test_a_tool_call_waiting_for_its_result_is_never_summarized() -> None:
    c = chat(3)
    c.user("run")
    (waiting,) = c.tools("Bash", results=False)
    up_to = plan_compaction(c.messages, "up_to", waiting.id, keep_window=WINDOW)
    assert up_to.keep_after == [waiting.id]
    assert up_to.adjusted_pivot is not None and "earlier" in up_to.adjusted_pivot.why
    from_ = plan_compaction(c.messages, "from", c.ids[2], keep_window=WINDOW)
    assert from_.keep_after == [waiting.id]
    assert from_.summarize == c.ids[2:-1]
    window = KeepWindowSettings(min_tokens=0, min_text_messages=0, max_tokens=0)
    everything = plan_compaction(c.messages, "all", keep_window=window)
    assert everything.keep_after == [waiting.id]


def test_safe_cuts_mark_pairs_and_responses() -> None:
    c = Convo()
    c.user("go")  # 0
    c.tools("Read", "Bash", interleaved=False)  # 1 a1, 2 a2, 3 r1, 4 r2
    c.reply("done")  # 5
    assert safe_cuts(c.messages) == [True, True, False, False, False, True, True]
