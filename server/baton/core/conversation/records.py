"""What a transcript line may hold: JSON whose every string can be written as UTF-8."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

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
    """The events as transcript lines: each one JSON (pydantic-core's serializer, compact
    separators, UTF-8, NaN and Infinity written as `json.dumps` writes them) and a newline.
    The serializer writes a boundary's big lists (every message a compaction stands for,
    three times) straight into the line's bytes, with no string object per item, and at
    about three times the speed of `json.dumps` (an import writes every message of its
    file). A model in an event is written in its wire form (camelCase, None fields left
    out: the flags touch models only, a dict's nulls stay) straight into the line, with no
    dict made of it first: only a model whose null policy keeps no null (`keeps_no_null`)
    goes in so (an import's messages), since that form is then `WireModel.wire`'s."""
    batch = list(events)
    try:
        lines = [to_json(event, by_alias=True, exclude_none=True) for event in batch]
    except PydanticSerializationError:
        # Only now walk the events, to say where: the walk costs more than the encoding,
        # and a compaction's boundary record names thousands of message ids.
        check_writable(batch, "the record")
        raise
    lines.append(b"")
    return b"\n".join(lines)
