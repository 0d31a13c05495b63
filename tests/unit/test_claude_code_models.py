"""The message an import makes of a record without validating it again is the very model
the validator makes of the same values: its fields in their order, the fields set, no
extras, a content list of its own holding the blocks given, and a later assignment that
behaves as on a validated one."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from baton.core.conversation.messages import (
    ApiUsage,
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    share_bookkeeping,
)
from baton.core.importers.claude_code_models import message, usage

AT = "2025-05-01T10:00:00.000Z"


def shapes() -> list[dict[str, Any]]:
    """The fields each kind of record gives: a reply (every field, some None), a prompt, a
    record of tool results."""
    blocks: list[ContentBlock] = [
        ThinkingBlock(thinking="why", signature="sig"),
        TextBlock(text="hello"),
        ToolUseBlock(id="toolu_1", name="Read", input={"path": "a.py"}),
    ]
    reply = {
        "id": "a1",
        "role": "assistant",
        "content": blocks,
        "created_at": AT,
        "api_message_id": "msg_1",
        "usage": ApiUsage(input_tokens=3, output_tokens=4),
        "model": "claude-sonnet-4-5",
        "stop_reason": None,
    }
    bare = {**reply, "api_message_id": None, "usage": None, "model": None}
    prompt = {"id": "u1", "role": "user", "content": [TextBlock(text="hi")], "created_at": AT}
    results = [ToolResultBlock(tool_use_id="toolu_1", content="ok", is_error=None)]
    return [reply, bare, prompt, {**prompt, "id": "u2", "content": results}]


@pytest.mark.parametrize("fields", shapes())
def test_a_message_is_made_as_the_validator_makes_it(fields: dict[str, Any]) -> None:
    validated = Message.__pydantic_validator__.validate_python(fields)
    made = message(**fields)
    assert type(made) is Message
    assert list(made.__dict__.items()) == list(validated.__dict__.items())
    assert made.__pydantic_fields_set__ == validated.__pydantic_fields_set__ == set(fields)
    assert made.__pydantic_extra__ is validated.__pydantic_extra__ is None
    assert made.__pydantic_private__ is validated.__pydantic_private__ is None
    assert made.content is not fields["content"]  # its own list, as the validator's
    assert all(a is b for a, b in zip(made.content, fields["content"], strict=True))
    assert made.model_dump_json(by_alias=True, exclude_none=True) == validated.model_dump_json(
        by_alias=True, exclude_none=True
    )
    assert made == validated


@pytest.mark.parametrize("fields", shapes())
def test_a_message_holds_its_fields_in_a_dict_sharing_its_keys_as_a_loaded_one(
    fields: dict[str, Any],
) -> None:
    """Made so, its dict needs no copy into such a one as it is written (`keyed`)."""
    loaded = share_bookkeeping(Message.__pydantic_validator__.validate_python(fields))
    made = message(**fields)
    assert sys.getsizeof(made.__dict__) == sys.getsizeof(loaded.__dict__)
    plain = Message.__pydantic_validator__.validate_python(fields)
    assert sys.getsizeof(made.__dict__) < sys.getsizeof(plain.__dict__) // 2
    made.stop_reason, made.tokens = "end_turn", 7  # changed in place, its own
    assert (made.stop_reason, message(**fields).stop_reason) == ("end_turn", None)
    assert sys.getsizeof(made.__dict__) == sys.getsizeof(loaded.__dict__)


def test_every_field_message_leaves_out_has_a_default_of_its_own() -> None:
    """A field with a default factory (or none at all) would be left undefined: the ones
    Message has are those `message` requires."""
    made_by_call = {"id", "role", "content", "created_at"}
    for name, field in Message.model_fields.items():
        if field.default_factory is not None or field.is_required():
            assert name in made_by_call, name


def test_a_made_message_changes_as_a_validated_one() -> None:
    fields = shapes()[2]
    made, validated = message(**fields), Message.__pydantic_validator__.validate_python(fields)
    for each in (made, validated):
        each.stop_reason = "end_turn"
        each.content.append(TextBlock(text="more"))
    assert made == validated
    assert made.__pydantic_fields_set__ == validated.__pydantic_fields_set__
    assert len(fields["content"]) == 1  # the list given is left as it was


@pytest.mark.parametrize(
    "given",
    [
        {"input_tokens": 5, "output_tokens": 7, "service_tier": "standard"},
        {"cache_read_input_tokens": 2**70},
        {},
        {"input_tokens": True, "output_tokens": 3},  # read as 1, by the validator
    ],
)
def test_a_usage_is_made_as_the_validator_makes_it_in_a_dict_sharing_its_keys(
    given: dict[str, Any],
) -> None:
    read = usage(given)
    fields = {k: v for k, v in given.items() if k in ApiUsage.model_fields}
    validated = ApiUsage.__pydantic_validator__.validate_python(fields)
    loaded = share_bookkeeping(message(**{**shapes()[2], "usage": validated})).usage
    assert type(read) is ApiUsage and read == validated
    assert list(read.__dict__.items()) == list(validated.__dict__.items())
    assert read.__pydantic_fields_set__ == validated.__pydantic_fields_set__ == set(fields)
    assert read.__pydantic_extra__ is validated.__pydantic_extra__ is None
    assert read.__pydantic_private__ is validated.__pydantic_private__ is None
    assert loaded is not None and sys.getsizeof(read.__dict__) == sys.getsizeof(loaded.__dict__)
    read.output_tokens = 9
    assert usage(given) == validated


def test_a_usage_keeps_its_whole_numbers_and_refuses_a_negative_one() -> None:
    given = {"input_tokens": 5, "output_tokens": "7", "cache_read_input_tokens": 9, "x": 1}
    read = usage(given)
    assert read == ApiUsage(input_tokens=5, cache_read_input_tokens=9)
    assert usage({"input_tokens": -1}) is None
    assert usage([1, 2]) is None
