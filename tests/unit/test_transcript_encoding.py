"""A transcript line is `json.dumps(event, ensure_ascii=False)`, whichever way it is made: a
boundary's big lists are joined a slice at a time, to the same text."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from baton.core.conversation import records
from baton.core.conversation.records import dumps, encode
from baton.core.errors import InvalidParams

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
    keys: list[Any] = ["a", "b", "type", "é", 'q"', "k" * 3]
    if rng.random() < 0.2:
        keys += [1, 2.5, None, True]  # json.dumps turns them into strings
    return {rng.choice(keys): value(rng, depth + 1) for _ in range(rng.randint(0, 6))}


@pytest.mark.parametrize("seed", range(8))
def test_dumps_writes_what_json_dumps_writes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(records, "BIG", rng.choice([1, 2, 4, 7]))  # lists cut into slices
    for _ in range(300):
        item = value(rng)
        assert dumps(item) == json.dumps(item, ensure_ascii=False)


def test_a_boundary_line_is_the_one_json_dumps_makes() -> None:
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
    expected = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)
    assert encode(events) == expected.encode("utf-8")


def test_a_boundary_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(InvalidParams, match="lone surrogate"):
        encode([{"type": "boundary", "boundary": {"ids": ["a\ud800"] * 400}}])
