"""A large answer's JSON text made in a worker thread, a slice at a time: the whole view of a
long session (`get`, `render` without a page: what a client that opens the session asks)
dumped and encoded on the event loop held every other request for seconds.

The text is the answer's `wire()` form, byte for byte as `json.dumps` of it would be: its
long lists are dumped an item at a time and encoded a slice at a time, and its long
strings encoded a piece at a time, so that no single call holds the interpreter for long
and the loop keeps answering meanwhile. The protocol (`rpc.py`) writes it as it is
(`Encoded`).
"""

from __future__ import annotations

import json
from typing import Any

from baton.core.conversation.messages import WireModel
from baton.core.service.lanes import in_thread
from baton.lsp.dispatch.rpc import Encoded

ITEMS = 1_000  # a list longer than this makes an answer large; encoded this many at a time
CHARS = 1 << 20  # a string longer than this makes it large; encoded this many at a time


def large(result: WireModel) -> bool:
    """Whether `result` holds a list or a string long enough to weigh on the event loop."""
    for value in result.__dict__.values():
        if (isinstance(value, list) and len(value) > ITEMS) or (
            isinstance(value, str) and len(value) > CHARS
        ):
            return True
    return False


async def encoded(result: WireModel) -> Encoded:
    """`result.wire()` as JSON text, made in a worker thread."""
    return await in_thread(lambda: encode(result))


def encode(result: WireModel) -> Encoded:
    """`json.dumps(result.wire())`, its long lists and strings done a slice at a time."""
    long = {
        name: value
        for name, value in result.__dict__.items()
        if (isinstance(value, list) and len(value) > ITEMS and _models(value))
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
    parts = []
    for key, value in out.items():
        raw = pieces.get(key)
        text = _text(raw) if raw is not None else json.dumps(value)
        parts.append(f"{json.dumps(key)}: {text}")
    return Encoded("{" + ", ".join(parts) + "}")


def _models(items: list[Any]) -> bool:
    return all(isinstance(item, WireModel) for item in items)


def _text(value: Any) -> str:
    if isinstance(value, str):
        quoted = [json.dumps(value[i : i + CHARS])[1:-1] for i in range(0, len(value), CHARS)]
        return '"' + "".join(quoted) + '"'
    slices = (
        json.dumps([item.wire() for item in value[i : i + ITEMS]])[1:-1]
        for i in range(0, len(value), ITEMS)
    )
    return "[" + ", ".join(slices) + "]"
