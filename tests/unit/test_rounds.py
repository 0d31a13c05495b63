"""API rounds and head truncation for summary prompts that are too long."""

from __future__ import annotations

from conversations import Convo

from baton.core.compaction.rounds import TRUNCATION_MARKER, api_rounds, truncate_head
from baton.core.conversation.messages import Message


def ids(groups: list[list[Message]]) -> list[list[str]]:
    return [[m.id for m in group] for group in groups]


def tokens(message: Message) -> int:
    return message.tokens


def test_rounds_start_at_each_new_api_response_and_keep_split_records_together() -> None:
    c = Convo()
    c.user("first")  # m1
    c.user("more context")  # m2
    c.tools("Read", "Bash")  # m3..m6, one API id, results interleaved
    c.reply("done")  # m7
    c.user("next")  # m8
    c.reply("ok")  # m9
    assert ids(api_rounds(c.messages)) == [
        ["m1", "m2"],
        ["m3", "m4", "m5", "m6"],
        ["m7", "m8"],
        ["m9"],
    ]


def test_a_conversation_starting_with_the_assistant_has_no_empty_round() -> None:
    c = Convo()
    c.reply("hello")
    c.user("hi")
    assert ids(api_rounds(c.messages)) == [["m1", "m2"]]


def test_assistant_records_without_an_api_id_each_start_a_round() -> None:
    c = Convo()
    c.user("q")
    c.reply("a", api_message_id=None)
    c.reply("b", api_message_id=None)
    assert ids(api_rounds(c.messages)) == [["m1"], ["m2"], ["m3"]]


def conversation(turns: int) -> Convo:
    c = Convo(tokens=100)
    for n in range(turns):
        c.user(f"q{n}")
        c.reply(f"a{n}")
    return c


def test_truncation_drops_the_oldest_rounds_until_the_overflow_is_covered() -> None:
    c = conversation(5)  # rounds: [q0], [a0 q1], [a1 q2], [a2 q3], [a3 q4], [a4]
    rest = truncate_head(c.messages, 250, tokens)
    assert rest is not None
    # 100 + 200 = 300 >= 250 after two rounds; the rest starts with a0's successor a1
    assert rest[0].text() == TRUNCATION_MARKER and rest[0].role == "user"
    assert [m.text() for m in rest[1:]] == ["a1", "q2", "a2", "q3", "a3", "q4", "a4"]


def test_truncation_without_numbers_drops_a_fifth_of_the_rounds() -> None:
    c = conversation(14)  # 15 rounds -> drop 3
    rest = truncate_head(c.messages, None, tokens)
    assert rest is not None
    assert [m.text() for m in rest[1:3]] == ["a2", "q3"]


def test_truncation_always_drops_at_least_one_round_and_keeps_the_last() -> None:
    c = conversation(2)  # rounds: [q0], [a0 q1], [a1]
    small = truncate_head(c.messages, None, tokens)
    assert small is not None
    assert [m.text() for m in small] == [TRUNCATION_MARKER, "a0", "q1", "a1"]
    huge = truncate_head(c.messages, 1_000_000, tokens)
    assert huge is not None and [m.text() for m in huge] == [TRUNCATION_MARKER, "a1"]


def test_truncation_of_a_single_round_is_impossible() -> None:
    c = Convo()
    c.user("only")
    c.user("prompts")
    assert truncate_head(c.messages, 10, tokens) is None
    assert truncate_head([], None, tokens) is None


def test_truncation_never_leaves_a_tool_result_without_its_call() -> None:
    c = Convo()
    c.user("go")
    c.tools("Read", "Grep", "Bash")
    c.tools("Edit", interleaved=False)
    c.reply("done")
    for overflow in (None, 1, 300, 700, 900):
        rest = truncate_head(c.messages, overflow, tokens)
        assert rest is not None
        calls = {u.id for m in rest for u in m.tool_uses()}
        assert all(r.tool_use_id in calls for m in rest for r in m.tool_results())


def test_a_second_truncation_drops_real_rounds_not_the_previous_marker() -> None:
    c = conversation(5)
    first = truncate_head(c.messages, 250, tokens)
    assert first is not None
    second = truncate_head(first, None, tokens)  # rounds: [a1 q2] [a2 q3] [a3 q4] [a4]
    assert second is not None
    assert [m.text() for m in second] == [TRUNCATION_MARKER, "a2", "q3", "a3", "q4", "a4"]
