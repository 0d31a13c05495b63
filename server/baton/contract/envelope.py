"""The JSON-RPC 2.0 envelope both faces check before anything else: what makes a message a
request, a notification or a response, and which ids can be answered."""

from __future__ import annotations

import json
import re
from typing import Any

INVALID_REQUEST = -32600

# strings (so that their brackets do not count) and brackets, to cut a too-deep message down
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def usable_id(msg_id: Any) -> bool:
    """A request id Baton can answer: a string or an integer (JSON-RPC 2.0)."""
    return isinstance(msg_id, str | int) and not isinstance(msg_id, bool)


def envelope_problem(message: Any) -> str | None:
    """Why `message` is no JSON-RPC 2.0 request, notification or response (None: it is)."""
    if not isinstance(message, dict):
        return "not a JSON-RPC 2.0 message: expected an object"
    if message.get("jsonrpc") != "2.0":
        return 'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"'
    if "id" in message and message["id"] is not None and not usable_id(message["id"]):
        return "a request id must be a string or an integer"
    if "method" in message and "id" in message and message["id"] is None:
        return "a request id must be a string or an integer"  # null only answers the unreadable
    if "method" in message:
        return None if isinstance(message["method"], str) else "a method must be a string"
    if "result" not in message and "error" not in message:
        return "neither a request (no method) nor a response (no result or error)"
    return None


def shallow(body: bytes, keep: int = 1) -> Any:
    """The message with everything nested deeper than `keep` levels replaced by null: the
    id and method of one too deep to decode whole (None when even that is not JSON)."""
    pieces: list[bytes] = []
    depth, last = 0, 0
    for token in _TOKEN.finditer(body):
        mark = token.group()
        if mark in (b"{", b"["):
            depth += 1
            if depth == keep + 1:
                pieces.append(body[last : token.start()])
        elif mark in (b"}", b"]"):
            if depth == keep + 1:
                pieces.append(b"null")
                last = token.end()
            depth -= 1
    pieces.append(body[last:])
    try:
        return json.loads(b"".join(pieces))
    except (ValueError, RecursionError):
        return None
