"""A frame's body as a JSON-RPC message: decoded, checked and handed on, or answered.

A decoded message whose params nest deeper than `MAX_DEPTH`, or hold NaN or Infinity (which
Python's json reads and JSON does not have), is answered `invalid_params` without ever
reaching a validator; a body that is not JSON is answered with a parse error.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)

from baton.contract.envelope import shallow

log = logging.getLogger(__name__)

MAX_DEPTH = 64  # arrays and objects nested in a message's params


class Answering(Protocol):
    """What the reader needs of the JSON-RPC protocol: hand a message on, answer an error."""

    def handle_message(self, message: Any) -> None: ...

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None: ...


def dispatch(protocol: Answering, body: bytes) -> None:
    """Decode one message body and hand it on; answer what cannot be handed on."""
    deep = False
    try:
        message = json.loads(body, parse_constant=_not_json)
    except RecursionError:
        deep = True
    except _NotJson as exc:  # NaN or Infinity: Python reads them, JSON has no such values
        _refuse(protocol, body, f"params hold {exc}, which is not JSON")
        return
    except ValueError as exc:  # not JSON, not UTF-8, an integer of too many digits
        log.warning("could not parse a message of %d bytes: %s", len(body), _why(exc))
        protocol.send_error(None, JsonRpcParseError(f"could not parse the message: {_why(exc)}"))
        return
    if deep or _too_deep(body, message):
        _refuse(protocol, body, f"params nest deeper than {MAX_DEPTH} levels of arrays and objects")
        return
    protocol.handle_message(message)


class _NotJson(ValueError):
    pass


def _not_json(name: str) -> object:
    raise _NotJson(name)


def _why(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at byte {exc.pos}"
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid {exc.encoding} at byte {exc.start}"
    return "not valid JSON"


def _too_deep(body: bytes, message: Any) -> bool:
    limit = MAX_DEPTH + 1  # the message object itself is one level
    if body.count(b"{") + body.count(b"[") <= limit:
        return False
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _refuse(protocol: Answering, body: bytes, text: str) -> None:
    """A message whose params cannot be taken: invalid_params to a request, invalid
    request when there is no usable method, nothing to a notification (logged)."""
    envelope = shallow(body)
    msg_id = envelope.get("id") if isinstance(envelope, dict) else None
    method = envelope.get("method") if isinstance(envelope, dict) else None
    log.warning("refused a %s message of %d bytes: %s", method or "JSON", len(body), text)
    has_id = isinstance(envelope, dict) and "id" in envelope  # a deep id reads as null here
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        msg_id = None
    if msg_id is not None and isinstance(method, str):
        protocol.send_error(msg_id, JsonRpcInvalidParams(text, data={"code": "invalid_params"}))
    elif isinstance(envelope, dict) and method is None and {"result", "error"} & set(envelope):
        pass  # a response from the client: nobody to answer
    elif has_id or not isinstance(method, str):
        protocol.send_error(msg_id, JsonRpcInvalidRequest(text))
    # a notification that cannot be taken has nobody to answer: dropped (said above)


def handle_body(protocol: Answering, body: bytes) -> None:
    try:
        dispatch(protocol, body)
    except (SystemExit, KeyboardInterrupt, ConnectionError):
        raise
    except Exception:  # a fault in handling one message never ends the loop
        log.exception("could not handle a message of %d bytes", len(body))
