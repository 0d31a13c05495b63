"""A large answer's JSON text made in a worker thread, a piece at a time: the whole view of
a long session (`get`, `render` without a page: what a client that opens the session
asks) dumped and encoded on the event loop held every other request for seconds, and a
message holding a long text (a 200 MB tool result) took two more copies of it there (the
encoder's escaped text and its buffer).

The text is the answer's `wire()` form, byte for byte as `json.dumps` of it would be: its
long lists are dumped a slice of items at a time, and its long strings, at the top or
inside a message, encoded a piece at a time, so that no single call holds the
interpreter for long and the loop keeps answering meanwhile. The pieces are not joined:
the protocol (`writing.py`) writes them as they are (`Encoded`), so the answer's text is
held once, beside what the session holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from baton.core.conversation.wire_model import WireModel
from baton.core.memory import collector_paused
from baton.core.service.lanes import in_thread
from baton.lsp.dispatch.writing import Encoded

ITEMS = 1_000  # a list longer than this makes an answer large; encoded this many at a time
CHARS = 1 << 20  # a string longer than this makes it large; encoded this many at a time
LONG_TOKENS = CHARS // 64  # a message counted at fewer tokens holds no string of CHARS


def large(result: WireModel) -> bool:
    """Whether `result` holds a list or a string long enough to weigh on the event loop, or
    an item of a list holding such a string (a message's long text)."""
    for value in result.__dict__.values():
        if isinstance(value, str) and len(value) > CHARS:
            return True
        if isinstance(value, list) and (len(value) > ITEMS or any(map(_long_message, value))):
            return True
    return False


async def encoded(result: WireModel) -> Encoded:
    """`result.wire()` as JSON text, made in a worker thread, the cyclic collector kept out:
    what the encoding makes (each item's wire dict, the text) holds no cycle and goes by
    its count, and the answer's models, young, would be walked at each collection."""

    def encode_paused() -> Encoded:
        with collector_paused():
            return encode(result)

    return await in_thread(encode_paused)


def encode(result: WireModel) -> Encoded:
    """`json.dumps(result.wire())` in pieces, its long lists and strings done a slice at a
    time."""
    long = {
        name: value
        for name, value in result.__dict__.items()
        if (
            isinstance(value, list)
            and _models(value)
            and (len(value) > ITEMS or any(map(_long_message, value)))
        )
        or (isinstance(value, str) and len(value) > CHARS)
    }
    empty = {name: [] if isinstance(value, list) else "" for name, value in long.items()}
    head = result.model_copy(update=empty)
    out = head.wire()
    aliases = {
        name: info.serialization_alias or info.alias or name
        for name, info in type(result).model_fields.items()
    }
    pieces = {aliases[name]: value for name, value in long.items()}
    text = ["{"]
    for n, (key, value) in enumerate(out.items()):
        text.append(f"{', ' if n else ''}{json.dumps(key)}: ")
        raw = pieces.get(key)
        if raw is None:
            text.append(json.dumps(value))
        elif isinstance(raw, str):
            text.extend(_string(raw))
        else:
            text.extend(_items(raw))
    text.append("}")
    return Encoded(text)


def _models(items: list[Any]) -> bool:
    return all(isinstance(item, WireModel) for item in items)


def _long_message(item: Any) -> bool:
    """Whether `item`, a message, holds a string longer than `CHARS`: looked for only in a
    message of `LONG_TOKENS` or more, or not counted (a text of `CHARS` characters is
    counted far more: a look at every message of a page would cost the loop more than
    the answer's dump); an item that is no message holds no long string."""
    tokens = getattr(item, "tokens", None)
    if not isinstance(tokens, int) or 0 < tokens < LONG_TOKENS:
        return False
    return _holds_long(item)


def _holds_long(value: Any) -> bool:
    """Whether `value` (a model, or what one holds) holds a string longer than `CHARS`."""
    if isinstance(value, str):
        return len(value) > CHARS
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__ or {}
        return any(map(_holds_long, value.__dict__.values())) or any(
            map(_holds_long, extra.values())
        )
    if isinstance(value, dict):
        return any(map(_holds_long, value.values()))
    if isinstance(value, list | tuple):
        return any(map(_holds_long, value))
    return False


def _items(items: list[WireModel]) -> Iterator[str]:
    """The JSON array of `items`' wire forms: a slice of them dumped at a time, an item
    holding a long string in pieces of its own."""
    yield "["
    for start in range(0, len(items), ITEMS):
        chunk = items[start : start + ITEMS]
        if start:
            yield ", "
        if not any(map(_long_message, chunk)):
            yield json.dumps([item.wire() for item in chunk])[1:-1]
            continue
        for n, item in enumerate(chunk):
            if n:
                yield ", "
            if _long_message(item):
                yield from _value(item.wire())
            else:
                yield json.dumps(item.wire())
    yield "]"


def _value(value: Any) -> Iterator[str]:
    """`json.dumps(value)` in pieces: its long strings a piece at a time."""
    if isinstance(value, str):
        yield from _string(value)
    elif (
        isinstance(value, dict)
        and all(isinstance(key, str) for key in value)
        and _holds_long(value)
    ):
        yield "{"
        for n, (key, item) in enumerate(value.items()):
            yield f"{', ' if n else ''}{json.dumps(key)}: "
            yield from _value(item)
        yield "}"
    elif isinstance(value, list) and _holds_long(value):
        yield "["
        for n, item in enumerate(value):
            if n:
                yield ", "
            yield from _value(item)
        yield "]"
    else:
        yield json.dumps(value)


def _string(value: str) -> Iterator[str]:
    """`json.dumps(value)` a slice of `CHARS` characters at a time."""
    if len(value) <= CHARS:
        yield json.dumps(value)
        return
    yield '"'
    for at in range(0, len(value), CHARS):
        yield json.dumps(value[at : at + CHARS])[1:-1]
    yield '"'
