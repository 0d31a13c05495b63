"""What a transcript line may hold: JSON whose every string can be written as UTF-8."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from baton.core.errors import InvalidParams

Event = dict[str, Any]
# Records written a field at a time, how many levels down: a boundary's names every message
# its compaction stands for, several times (hundreds of KB in a long session).
FIELD_AT_A_TIME = {"boundary": 2}


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
    elif isinstance(value, BaseModel):  # an event's model, as `encode` writes it
        return unwritable(value.model_dump(mode="json", by_alias=True, exclude_none=True), where)
    return None


def check_writable(value: Any, what: str) -> None:
    """`invalid_params` when some string in `value` cannot be written as UTF-8."""
    found = unwritable(value)
    if found is not None:
        raise InvalidParams(
            f"{what} holds text that cannot be written as UTF-8 (a lone surrogate) at "
            f"{found.lstrip('.') or 'its value'}"
        )


def encode(events: Iterable[Event]) -> bytes:
    """The events as transcript lines, in one buffer (`encode_parts` joined)."""
    return b"".join(encode_parts(events))


def encode_parts(events: Iterable[Event]) -> list[bytes]:
    """The events as transcript lines: each one JSON (pydantic-core's serializer, compact
    separators, UTF-8, NaN and Infinity written as `json.dumps` writes them) and a newline,
    as the parts a write takes in turn (each line, then its newline): a compaction's record
    line is hundreds of KB, and a copy of it joined to its newline would double it.
    The serializer writes a boundary's big lists (every message a compaction stands for,
    three times) straight into the line's bytes, with no string object per item, and at
    about three times the speed of `json.dumps` (an import writes every message of its
    file). A model in an event is written in its wire form (camelCase, None fields left
    out: the flags touch models only, a dict's nulls stay) straight into the line, with no
    dict made of it first: only a model whose null policy keeps no null (`keeps_no_null`)
    goes in so (an import's messages), since that form is then `WireModel.wire`'s."""
    batch = list(events)
    parts: list[bytes] = []
    try:
        for event in batch:
            kind = event.get("type") if type(event) is dict else None
            depth = FIELD_AT_A_TIME.get(kind, 0) if type(kind) is str else 0
            if depth:
                parts += _json_parts(event, depth)
            else:  # a line in one part, as a rule (`_json_parts` would make a list of it)
                parts.append(to_json(event, by_alias=True, exclude_none=True))
            parts.append(b"\n")
    except PydanticSerializationError:
        # Only now walk the events, to say where: the walk costs more than the encoding,
        # and a compaction's boundary record names thousands of message ids.
        check_writable(batch, "the record")
        raise
    return parts


def _json_parts(value: Any, depth: int) -> list[bytes]:
    """`value`'s JSON, as `to_json` writes it, in parts that join to it: a dict whose keys
    are all text is written a field at a time, `depth` levels down, so no buffer holds
    the whole (the serializer's grows by doubling, then is copied into the line)."""
    if depth <= 0 or type(value) is not dict or not all(type(key) is str for key in value):
        return [to_json(value, by_alias=True, exclude_none=True)]
    parts = [b"{"]
    for n, (key, item) in enumerate(value.items()):
        parts.append((b"," if n else b"") + to_json(key) + b":")
        parts += _json_parts(item, depth - 1)
    parts.append(b"}")
    return parts
