"""The JSON-RPC 2.0 envelope both faces check before anything else: what makes a message a
request, a notification or a response, and which ids can be answered."""

from __future__ import annotations

from typing import Any

INVALID_REQUEST = -32600


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
