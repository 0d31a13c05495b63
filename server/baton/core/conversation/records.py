"""What a transcript line may hold: JSON whose every string can be written as UTF-8."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from baton.core.errors import InvalidParams

Event = dict[str, Any]


def unwritable(value: Any, where: str = "") -> str | None:
    """Where in `value` a string cannot be written as UTF-8 (a lone surrogate such as
    "\\ud800"), as a JSON path; None when all of it can."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "a string"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = unwritable(key, f"{where}.{key!r} (a key)") or unwritable(
                item, f"{where}.{key}"
            )
            if found:
                return found
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            found = unwritable(item, f"{where}[{n}]")
            if found:
                return found
    return None


def check_writable(value: Any, what: str) -> None:
    """`invalid_params` when some string in `value` cannot be written as UTF-8."""
    found = unwritable(value)
    if found is not None:
        raise InvalidParams(
            f"{what} holds text that cannot be written as UTF-8 (a lone surrogate) at "
            f"{found.lstrip('.') or 'its value'}"
        )


BIG = 256  # items of a list that `dumps` encodes a slice at a time
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(v, ensure_ascii=False)


def dumps(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False)`, the same text, with less held at once for
    the big lists of a compaction's boundary (every message it stands for, three times):
    `json.dumps` keeps a string object for every item and separator until it is done
    (~5x the text), this joins `BIG` items at a time; a dict is walked into, anything
    else is `json.dumps`'s."""
    if isinstance(value, dict) and all(type(key) is str for key in value):
        pairs = (f"{_ENCODE(k)}: {dumps(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"  # json's default separators
    if isinstance(value, list) and len(value) > BIG:
        return "[" + ", ".join(_slices(value)) + "]"
    return _ENCODE(value)


def _slices(items: list[Any]) -> Iterable[str]:
    for start in range(0, len(items), BIG):
        yield ", ".join([dumps(item) for item in items[start : start + BIG]])


def encode(events: Iterable[Event]) -> bytes:
    batch = list(events)
    payload = "".join(
        (dumps(e) if e.get("type") == "boundary" else _ENCODE(e)) + "\n" for e in batch
    )
    try:
        return payload.encode("utf-8")
    except UnicodeEncodeError:
        # Only now walk the events, to say where: the walk costs more than the encoding,
        # and a compaction's boundary record names thousands of message ids.
        check_writable(batch, "the record")
        raise InvalidParams("the record holds text that cannot be written as UTF-8") from None
