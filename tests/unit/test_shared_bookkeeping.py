"""Stored messages share pydantic's per-instance bookkeeping (fields sets, empty extras)
with others of their shape, and every instance still reads and changes as its own."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from baton.core.conversation import shared_bookkeeping
from baton.core.conversation.messages import Message, MessageInput, TextBlock, share_bookkeeping
from baton.core.conversation.store import SessionStore


def wire(mid: str, text: str = "hello", **extra: object) -> dict[str, object]:
    return {
        "id": mid,
        "role": "user",
        "content": [{"type": "text", "text": text, **extra}],
        "createdAt": "2025-01-01T00:00:00.000Z",
        "tokens": 3,
        "pinned": False,
    }


def loaded(mid: str, **extra: object) -> Message:
    return share_bookkeeping(Message.model_validate(wire(mid, **extra)))


def test_messages_of_one_shape_share_one_set_and_read_as_unshared_ones() -> None:
    first, second = loaded("a"), loaded("b")
    plain = Message.model_validate(wire("a"))

    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.content[0].__pydantic_extra__ is second.content[0].__pydantic_extra__
    assert first.model_fields_set == plain.model_fields_set
    assert first.content[0].model_fields_set == plain.content[0].model_fields_set
    assert first.content[0].model_extra == {}
    assert first == plain
    assert first.wire() == plain.wire()
    assert first.model_dump(exclude_unset=True) == plain.model_dump(exclude_unset=True)


def test_a_change_to_one_instance_never_reaches_another() -> None:
    first, second = loaded("a"), loaded("b")
    shape = set(second.model_fields_set)

    first.boundary_id = "b1"  # a field not in the shared set
    first.pinned = True  # one that is
    first.content[0].citations = ["x"]  # an extra field on a block sharing the empty extras
    first.content[0].text = "changed"

    assert "boundary_id" in first.model_fields_set
    assert second.model_fields_set == shape
    assert loaded("c").model_fields_set == shape  # what later loads share is untouched
    assert first.content[0].model_extra == {"citations": ["x"]}
    assert second.content[0].model_extra == {}
    assert loaded("d").content[0].model_extra == {}
    assert second.wire() == Message.model_validate(wire("b")).wire()
    assert first.wire()["content"] == [{"type": "text", "text": "changed", "citations": ["x"]}]


def test_copies_of_a_sharing_instance_are_their_own() -> None:
    original = loaded("a")
    shape = set(original.model_fields_set)

    updated = original.model_copy(update={"stop_reason": "end_turn"})
    shallow, deep = copy.copy(original), copy.deepcopy(original)
    shallow.model = "m"
    deep.content[0].cache_control = {"type": "ephemeral"}

    assert "stop_reason" in updated.model_fields_set
    assert "model" in shallow.model_fields_set
    assert original.model_fields_set == shape == loaded("b").model_fields_set
    assert original.content[0].model_extra == {}
    assert deep.content[0].model_extra == {"cache_control": {"type": "ephemeral"}}


def test_blocks_with_their_own_extras_keep_them(tmp_path: Path) -> None:
    message = loaded("a", citations=[{"n": 1}])
    assert message.content[0].model_extra == {"citations": [{"n": 1}]}
    assert message.content[0].__pydantic_extra__ is not loaded("b").content[0].__pydantic_extra__


def test_past_the_cap_of_shapes_nothing_new_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_bookkeeping, "_SHAPES", {})
    monkeypatch.setattr(shared_bookkeeping, "MAX_SHAPES", 1)
    first = loaded("a")  # the message's shape takes the one place
    second = loaded("b")

    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.content[0].__pydantic_fields_set__ is not second.content[0].__pydantic_fields_set__
    assert first.content[0].model_fields_set == second.content[0].model_fields_set


def test_a_loaded_session_shares_and_its_pins_and_appends_stay_their_own(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, lambda m: 1)
    session = store.create(title="t")
    for n in range(6):
        session.append([MessageInput(role=("user", "assistant")[n % 2], content=f"turn {n}")])
    pinned = session.view[2]
    session.set_pinned(pinned, True)
    store.close()

    reopened = SessionStore(tmp_path, lambda m: 1)
    session = reopened.get(session.session_id)
    messages = session.view_messages()
    assert len({id(m.__pydantic_fields_set__) for m in messages}) < len(messages)
    assert [m.pinned for m in messages] == [m.id == pinned for m in messages]

    session.set_pinned(messages[0].id, True)
    assert [m.pinned for m in session.view_messages()] == [
        m.id in (pinned, messages[0].id) for m in messages
    ]
    for message in session.view_messages():
        fresh = Message.model_validate(message.wire())
        assert message == fresh
        assert message.model_fields_set == fresh.model_fields_set
        assert [b.model_fields_set for b in message.content] == [
            b.model_fields_set for b in fresh.content
        ]
    assert isinstance(messages[0].content[0], TextBlock)
    reopened.close()


def test_a_loaded_messages_fields_share_their_keys_and_read_change_and_copy_as_its_own() -> None:
    first, second = loaded("a"), loaded("b")
    plain = Message.model_validate(wire("a"))

    assert sys.getsizeof(first.__dict__) < sys.getsizeof(plain.__dict__) * 3 // 4
    assert list(first.__dict__.items()) == list(plain.__dict__.items())
    assert first == plain and first.wire() == plain.wire()
    assert repr(first) == repr(plain)
    assert first.model_copy() == plain and copy.deepcopy(first) == plain

    first.pinned = True
    first.tokens = 9
    changed = first.model_copy(update={"model": "m"})
    assert (first.pinned, first.tokens, changed.model, changed.tokens) == (True, 9, "m", 9)
    assert (second.pinned, second.tokens, second.model) == (False, 3, None)
    assert second.wire() == Message.model_validate(wire("b")).wire()


def test_loaded_blocks_and_usages_share_their_fields_keys_and_read_change_copy_as_their_own() -> (
    None
):
    raw = {
        **wire("a"),
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "hello", "citations": [{"n": 1}]},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.py"}},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }
    first = share_bookkeeping(Message.model_validate(raw))
    second = share_bookkeeping(Message.model_validate(raw))
    plain = Message.model_validate(raw)
    assert first.usage is not None and plain.usage is not None and second.usage is not None

    pairs = [*zip(first.content, plain.content, strict=True), (first.usage, plain.usage)]
    for shared, own in pairs:  # a block of a few fields: 184 bytes of dict, 88-104 shared
        assert sys.getsizeof(shared.__dict__) < sys.getsizeof(own.__dict__) * 3 // 5
        assert list(shared.__dict__.items()) == list(own.__dict__.items())
        assert shared == own and repr(shared) == repr(own)
        assert shared.model_copy() == own and copy.deepcopy(shared) == own
    assert first == plain and first.wire() == plain.wire()
    assert first.content[1].model_extra == {"citations": [{"n": 1}]}

    first.content[1].text = "changed"
    first.content[1].cache_control = {"type": "ephemeral"}
    first.usage.output_tokens = 9
    assert second.content[1].text == "hello" and second.content[1].model_extra == {
        "citations": [{"n": 1}]
    }
    assert second.usage.output_tokens == 7
    assert second == plain and second.wire() == plain.wire()
    assert first.wire()["content"][1] == {
        "type": "text",
        "text": "changed",
        "citations": [{"n": 1}],
        "cache_control": {"type": "ephemeral"},
    }
    assert "cache_control" not in first.content[1].__dict__
