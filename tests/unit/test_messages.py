"""Messages: API-invariant checks (one test per rule) and the camelCase wire form."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from baton.core.conversation.invariants import (
    ApiRules,
    invariant_violations,
    unanswered_tool_uses,
)
from baton.core.conversation.messages import (
    ApiUsage,
    ContentBlock,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def prompt(mid: str, text: str = "hi") -> Message:
    return Message(id=mid, role="user", content=[TextBlock(text=text)])


def reply(mid: str, *blocks: ContentBlock, api: str | None = None) -> Message:
    content: list[ContentBlock] = list(blocks) or [TextBlock(text="ok")]
    return Message(id=mid, role="assistant", content=content, api_message_id=api)


def use(use_id: str) -> ToolUseBlock:
    return ToolUseBlock(id=use_id, name="Read", input={"path": "a.py"})


def results(mid: str, *use_ids: str) -> Message:
    blocks: list[ContentBlock] = [ToolResultBlock(tool_use_id=u, content="x") for u in use_ids]
    return Message(id=mid, role="user", content=blocks)


# ---- invariants ----------------------------------------------------------------------------


def test_a_well_formed_conversation_has_no_violations() -> None:
    messages = [
        prompt("p1"),
        reply("a1", TextBlock(text="reading"), use("t1"), use("t2"), api="r1"),
        results("u1", "t1", "t2"),
        reply("a2", api="r2"),
        prompt("p2"),
        reply("a3", api="r3"),
    ]
    assert invariant_violations(messages) == []
    assert invariant_violations([]) == []


def test_a_conversation_must_start_with_a_user_message() -> None:
    problems = invariant_violations([reply("a1"), prompt("p1")])
    assert len(problems) == 1
    assert problems[0].startswith("a1:") and "start with a user message" in problems[0]


def test_a_tool_result_must_answer_a_tool_use() -> None:
    problems = invariant_violations([prompt("p1"), reply("a1"), results("u1", "nope")])
    assert problems == ["u1: tool_result nope answers no tool_use of the preceding assistant turn"]


def test_a_tool_result_cannot_answer_a_tool_use_of_an_earlier_turn() -> None:
    # the prompt p2 closes the first turn (and leaves t1 unanswered)
    messages = [prompt("p1"), reply("a1", use("t1")), prompt("p2"), results("u1", "t1")]
    problems = invariant_violations(messages)
    assert "a1: tool_use t1 is unanswered before the next user prompt" in problems
    assert "u1: tool_result t1 answers no tool_use of the preceding assistant turn" in problems


def test_a_tool_use_left_unanswered_before_the_next_prompt_is_a_violation() -> None:
    problems = invariant_violations([prompt("p1"), reply("a1", use("t1")), prompt("p2")])
    assert problems == ["a1: tool_use t1 is unanswered before the next user prompt"]


def test_a_tool_use_left_unanswered_before_another_response_is_a_violation() -> None:
    messages = [
        prompt("p1"),
        reply("a1", use("t1"), use("t2"), api="r1"),
        results("u1", "t1"),
        reply("a2", api="r2"),  # t2 never got its result
        results("u2", "t2"),
    ]
    problems = invariant_violations(messages)
    assert "a1: tool_use t2 is unanswered before the next response" in problems


def test_a_trailing_unanswered_tool_use_is_not_yet_a_violation() -> None:
    messages = [prompt("p1"), reply("a1", use("t1"))]
    assert invariant_violations(messages) == []
    assert [u.id for u in unanswered_tool_uses(messages)] == ["t1"]


def test_a_tool_result_answers_only_once() -> None:
    messages = [prompt("p1"), reply("a1", use("t1")), results("u1", "t1"), results("u2", "t1")]
    assert invariant_violations(messages) == [
        "u2: tool_result t1 answers no tool_use of the preceding assistant turn"
    ]


def test_tool_use_ids_must_be_unique() -> None:
    messages = [
        prompt("p1"),
        reply("a1", use("t1")),
        results("u1", "t1"),
        reply("a2", use("t1")),
    ]
    assert invariant_violations(messages) == ["a2: duplicate tool_use id t1"]


def test_records_of_one_api_response_may_have_tool_results_between_them() -> None:
    messages = [
        prompt("p1"),
        reply("a1", use("t1"), api="r1"),
        results("u1", "t1"),
        reply("a2", use("t2"), api="r1"),
        results("u2", "t2"),
    ]
    assert invariant_violations(messages) == []


def test_records_of_one_api_response_must_not_be_split_by_another_response() -> None:
    messages = [prompt("p1"), reply("a1", api="r1"), reply("a2", api="r2"), reply("a3", api="r1")]
    assert invariant_violations(messages) == ["a3: records of API message r1 are not contiguous"]


def test_a_user_prompt_ends_a_response_so_its_id_cannot_continue_after_it() -> None:
    messages = [prompt("p1"), reply("a1", api="r1"), prompt("p2"), reply("a2", api="r1")]
    assert invariant_violations(messages) == ["a2: records of API message r1 are not contiguous"]


def test_unanswered_tool_uses_only_looks_at_the_trailing_turn() -> None:
    messages = [
        prompt("p1"),
        reply("a1", use("t1")),
        prompt("p2"),
        reply("a2", use("t2"), use("t3")),
        results("u1", "t2"),
    ]
    assert [u.id for u in unanswered_tool_uses(messages)] == ["t3"]


# ---- message properties ----------------------------------------------------------------------


def test_usage_anchors_only_for_real_non_synthetic_assistant_responses() -> None:
    real = ApiUsage(input_tokens=10, cache_read_input_tokens=100, output_tokens=5)
    assert real.context_tokens == 115 and real.is_real
    assert reply("a1").model_copy(update={"usage": real}).anchors_usage
    synthetic = reply("a2").model_copy(update={"usage": real, "model": "<synthetic>"})
    assert not synthetic.anchors_usage
    assert not reply("a3").model_copy(update={"usage": ApiUsage()}).anchors_usage
    assert not prompt("p1").model_copy(update={"usage": real}).anchors_usage


def test_tool_result_only_records_are_not_user_prompts() -> None:
    assert results("u1", "t1").is_tool_result_only
    assert not results("u1", "t1").is_user_prompt
    assert prompt("p1").is_user_prompt
    summary = prompt("s1").model_copy(update={"kind": "summary"})
    assert not summary.is_user_prompt


def test_a_record_of_results_and_text_closes_its_turn_and_one_of_results_alone_does_not() -> None:
    both = Message(
        id="u1",
        role="user",
        content=[ToolResultBlock(tool_use_id="t1", content="x"), TextBlock(text="and then")],
    )
    opened = [prompt("p1"), reply("a1", use("t1"), use("t2"), api="r1")]
    problems = invariant_violations([*opened, both])
    assert problems == ["a1: tool_use t2 is unanswered before the next user prompt"]
    assert invariant_violations([*opened, results("u1", "t1"), results("u2", "t2")]) == []
    # a result an assistant record holds answers nothing, but is no longer awaited
    stray = reply("a2", use("t3"), ToolResultBlock(tool_use_id="t3", content="x"), api="r2")
    assert ApiRules().extend([prompt("p1"), stray]).unanswered() == []
    waiting = ApiRules().extend([prompt("p1"), reply("a2", use("t3"))]).unanswered()
    assert [u.id for u in waiting] == ["t3"]


# ---- the wire --------------------------------------------------------------------------------


def test_message_wire_is_camel_case_and_blocks_keep_api_names() -> None:
    message = Message(
        id="a1",
        role="assistant",
        content=[
            ToolUseBlock(id="t1", name="Read", input={"path": "a.py"}),
            ToolResultBlock(tool_use_id="t1", content="x", is_error=True),
        ],
        created_at="2025-01-01T00:00:00.000Z",
        api_message_id="r1",
        usage=ApiUsage(input_tokens=1, cache_creation_input_tokens=2, cache_read_input_tokens=3),
        stop_reason="tool_use",
    )

    wire = message.wire()

    assert wire["apiMessageId"] == "r1"
    assert wire["createdAt"] == "2025-01-01T00:00:00.000Z"
    assert wire["stopReason"] == "tool_use"
    assert wire["usage"] == {
        "inputTokens": 1,
        "outputTokens": 0,
        "cacheCreationInputTokens": 2,
        "cacheReadInputTokens": 3,
    }
    assert wire["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "x",
        "is_error": True,
    }
    assert "api_message_id" not in wire and "model" not in wire  # None is left out
    assert Message.model_validate(wire) == message


def test_message_reads_snake_case_too() -> None:
    raw: dict[str, Any] = {
        "id": "a1",
        "role": "assistant",
        "content": [{"type": "text", "text": "x"}],
        "api_message_id": "r1",
    }
    assert Message.model_validate(raw).api_message_id == "r1"


def test_blocks_keep_fields_the_api_adds() -> None:
    raw = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}, "caller": {"x": 1}}
    message = Message.model_validate({"role": "assistant", "content": [raw]})
    assert message.wire()["content"][0]["caller"] == {"x": 1}


@pytest.mark.parametrize(
    "raw",
    [
        {"role": "system", "content": "hi"},
        {"role": "user", "content": [{"type": "tool_use", "name": "Read"}]},
        {"role": "user", "content": [{"type": "video", "url": "x"}]},
        {"role": "user"},
    ],
    ids=["unknown-role", "tool-use-without-id", "unknown-block", "no-content"],
)
def test_malformed_input_is_rejected(raw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        MessageInput.model_validate(raw)


def test_string_input_becomes_one_text_block() -> None:
    item = MessageInput.model_validate({"role": "user", "content": "hello", "apiMessageId": "r"})
    assert item.blocks() == [TextBlock(text="hello")]
    assert item.api_message_id == "r"
