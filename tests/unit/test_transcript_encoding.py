"""A transcript line is the event as JSON: whatever `encode` writes, `json.loads` reads back
as the same event (NaN and Infinity included, as `json.dumps` writes them), one line per
event, a message model in an event is written as its wire form is, and a string that
cannot be written as UTF-8 is refused with where it is."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from pydantic_core import to_json

from baton.core.conversation.messages import (
    CONTENT_ADAPTER,
    ApiUsage,
    Message,
    TextBlock,
)
from baton.core.conversation.records import encode, encode_parts
from baton.core.conversation.wire_nulls import keeps_no_null
from baton.core.errors import InvalidParams
from baton.protocol import CompactResult

LEAVES: list[Any] = [
    "",
    "msg_0123456789abcdef",
    'quote " backslash \\ tab \t newline \n',
    "café 日本語 😀 \u2028 \x00 \x1f",
    0,
    -7,
    2**70,
    1.5,
    1e300,
    float("nan"),
    float("inf"),
    -float("inf"),
    True,
    False,
    None,
]


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(LEAVES)
    if roll < 0.7:
        return [value(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 5, 9, 40]))]
    keys = ["a", "b", "type", "é", 'q"', "k" * 3, "line\nbreak"]
    return {rng.choice(keys): value(rng, depth + 1) for _ in range(rng.randint(0, 6))}


def same(read: Any, written: Any) -> bool:
    """Equal, NaN counting as equal to NaN."""
    if isinstance(written, float) and math.isnan(written):
        return isinstance(read, float) and math.isnan(read)
    if isinstance(written, dict):
        return (
            isinstance(read, dict)
            and list(read) == list(written)
            and all(same(read[k], written[k]) for k in written)
        )
    if isinstance(written, list):
        return (
            isinstance(read, list)
            and len(read) == len(written)
            and all(same(r, w) for r, w in zip(read, written, strict=True))
        )
    return type(read) is type(written) and read == written


@pytest.mark.parametrize("seed", range(8))
def test_every_line_reads_back_as_the_event_it_was(seed: int) -> None:
    rng = random.Random(seed)
    events = [{"type": "meta", "value": value(rng)} for _ in range(300)]
    data = encode(events)
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert len(lines) == len(events)  # a newline in a string never breaks a line
    for line, event in zip(lines, events, strict=True):
        assert same(json.loads(line), event)


def test_a_boundary_line_holds_its_big_lists_whole() -> None:
    ids = [f"msg_{n:016x}" for n in range(3_000)]
    boundary = {
        "id": "cmp_1",
        "summarizedIds": ids,
        "viewBefore": ids,
        "standsFor": {"msg_summary": ids},
        "newMessages": [{"id": "s", "content": [{"type": "text", "text": "é\n" * 500}]}],
        "retention": {"kept": 3, "of": 4, "ratio": 0.75},
    }
    events = [{"type": "boundary", "boundary": boundary}, {"type": "meta", "title": "t"}]
    first, second, end = encode(events).split(b"\n")
    assert json.loads(first) == events[0]
    assert json.loads(second) == events[1]
    assert end == b""
    assert "é".encode() in first  # UTF-8 as it is, not \u escapes


@pytest.mark.parametrize("seed", range(4))
def test_a_boundary_record_is_written_a_field_at_a_time_as_the_whole_would_be(seed: int) -> None:
    rng = random.Random(seed)
    ids = [f"msg_{n:016x}" for n in range(3_000)]
    boundary = {
        "id": "cmp_1",
        "summarizedIds": ids,
        "viewBefore": ids,
        "standsFor": {"msg_summary": ids, "att": []},
        "newMessages": [message(rng)],
        "extra": {"value": value(rng, 2), 7: "a key that is no text"},
        "more": value(rng),
    }
    event = {"type": "boundary", "boundary": boundary}
    parts = encode_parts([event])
    # no part holds more than one of its lists of ids: the line is never held whole twice
    ids_json = to_json(ids)
    assert max(len(part) for part in parts) < 2 * len(ids_json)
    assert b"".join(parts) == to_json(event, by_alias=True, exclude_none=True) + b"\n"
    assert encode([event]) == b"".join(parts)


def test_a_boundary_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(InvalidParams, match=r"lone surrogate\) at \[0\]\.boundary\.ids\[0\]"):
        encode([{"type": "boundary", "boundary": {"ids": ["a\ud800"] * 400}}])


def test_a_key_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(InvalidParams, match="lone surrogate"):
        encode([{"type": "meta", "extra": {"k\udc80": 1}}])


def message(rng: random.Random) -> Message:
    """A message whose blocks carry fields of every kind besides their own (nulls, NaN,
    big numbers, nested values), as a Claude Code file's blocks may."""
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": rng.choice(LEAVES[:4]), "extra": value(rng)},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": value(rng), "x": None},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text"}]},
        {"type": "thinking", "thinking": "hm", "signature": None, "n": float("inf")},
    ]
    usage = ApiUsage(input_tokens=rng.randint(0, 9)) if rng.random() < 0.5 else None
    content = CONTENT_ADAPTER.validate_python(rng.sample(blocks, rng.randint(1, 4)))
    return Message(role="assistant", content=content, usage=usage, model=rng.choice([None, "m"]))


@pytest.mark.parametrize("seed", range(4))
def test_a_message_in_an_event_is_written_as_its_wire_form_is(seed: int) -> None:
    rng = random.Random(seed)
    messages = [message(rng) for _ in range(200)]
    as_models = encode([{"type": "message", "message": m} for m in messages])
    assert as_models == encode([{"type": "message", "message": m.wire()} for m in messages])
    assert keeps_no_null(Message)  # so an import writes its messages as models
    assert not keeps_no_null(CompactResult)  # its summary is sent as null


def test_a_message_in_an_event_with_a_lone_surrogate_is_refused_with_where() -> None:
    bad = Message(role="user", content=[TextBlock(text="ok"), TextBlock(text="a\ud800")])
    with pytest.raises(InvalidParams, match=r"at \[0\]\.message\.content\[1\]\.text"):
        encode([{"type": "message", "message": bad}])
