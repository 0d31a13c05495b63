"""The SDK client whose requests' JSON bodies are encoded in a worker thread, a piece at a
time.

The SDK encodes a request's body on the event loop as it builds the request: a send whose
images and documents come near the API's 32 MB held every other session 0.34 s (a body of
29.6 MB). The SDK asks its `_prepare_options` hook for each attempt before it builds the
request; there the body is encoded in a thread of its own and handed to the SDK as the
request's content, which it sends as it is (with the JSON content type its default headers
give every request). In one call `json` would hold the interpreter, and so the loop, for
all of it: the body is encoded a content block at a time (each call no longer than the
largest block: an image's 5 MB), the bytes the SDK's own encoder makes. A body this cannot
encode (a value plain JSON does not know), or an SDK without that option, is left to the
SDK."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from baton.core import background


class OffLoopBodies(anthropic.AsyncAnthropic):
    """`anthropic.AsyncAnthropic`, each request's JSON body encoded off the event loop."""

    async def _prepare_options(self, options: Any) -> Any:
        options = await super()._prepare_options(options)
        return await encoded_off_loop(options)


async def encoded_off_loop(options: Any) -> Any:
    """`options` (the SDK's `FinalRequestOptions`) with its JSON body encoded in a worker
    thread into its `content`: when it has a body, no extra one to merge, and the option."""
    body = getattr(options, "json_data", None)
    fields = getattr(type(options), "model_fields", {})
    if not isinstance(body, dict) or "content" not in fields or options.content is not None:
        return options
    if getattr(options, "extra_json", None) or getattr(options, "files", None):
        return options
    try:
        content = await background.daemon(lambda: encoded(body), "encoding a request body")
    except (TypeError, ValueError):  # not plain JSON: the SDK's encoder knows more types
        return options
    options.content, options.json_data = content, None
    return options


# the SDK encoder's settings: compact, UTF-8 as it is, no NaN
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
PIECE_DEPTH = 4  # body, its messages, a message, its content: each block encoded whole


def encoded(body: dict[str, Any]) -> bytes:
    """The body as the SDK's encoder makes it, encoded a piece at a time."""
    pieces: list[str] = []
    _encode(body, PIECE_DEPTH, pieces)
    return "".join(pieces).encode()


def _encode(value: Any, depth: int, pieces: list[str]) -> None:
    """`value`'s JSON appended to `pieces`: a dict's or a list's items one by one down to
    `depth` levels, anything deeper in one call."""
    if depth and type(value) is dict:
        pieces.append("{")
        for n, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):  # the encoder's own rules for other keys
                raise TypeError("a body's keys are strings")
            pieces.append(("," if n else "") + _ENCODER.encode(key) + ":")
            _encode(item, depth - 1, pieces)
        pieces.append("}")
    elif depth and type(value) is list:
        pieces.append("[")
        for n, item in enumerate(value):
            if n:
                pieces.append(",")
            _encode(item, depth - 1, pieces)
        pieces.append("]")
    else:
        pieces.append(_ENCODER.encode(value))
