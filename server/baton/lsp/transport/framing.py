"""Reading JSON-RPC off the wire: frames, their limits, resynchronising after malformed input.

pygls's own reader trusts every header: a huge `Content-Length` kills or exhausts the
server, and any malformed frame glues its body to the next header so that nothing is read
again. Baton reads frames itself: a header block is only used when it is well formed
(`Name: value` lines ending in CRLF, one decimal `Content-Length` no larger than
`MAX_CONTENT_LENGTH`); anything else is dropped up to the next header that could start a
frame, said once on stderr (sizes and reasons; the bytes only at DEBUG) and answered with
one parse error per run of dropped input. A decoded message whose params nest deeper than
`MAX_DEPTH`, or hold NaN or Infinity (which Python's json reads and JSON does not have), is
answered `invalid_params` without ever reaching a validator.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)

log = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 64 * 1024 * 1024  # bytes in one message body
MAX_BEFORE_TOKEN = 1024 * 1024  # a network connection's first message (its initialize)
MAX_HEADER_LINE = 8 * 1024  # a longer line without a line end is noise
MAX_DEPTH = 64  # arrays and objects nested in a message's params
CHUNK = 64 * 1024

_HEADER = re.compile(rb"([A-Za-z0-9][A-Za-z0-9_-]*):[ \t]*(.*?)[ \t]*\r\n", re.S)
_LENGTH = b"content-length:"
_DIGITS = re.compile(rb"[0-9]{1,20}")
# strings (so that their brackets do not count) and brackets, to cut a too-deep message down
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


@dataclass(frozen=True)
class Frame:
    body: bytes


@dataclass(frozen=True)
class Dropped:
    """Input that was not part of any usable frame; `first` of a run since the last frame."""

    data: bytes
    reason: str
    first: bool


Event = Frame | Dropped


class FrameDecoder:
    """Bytes in, frames and dropped input out (no I/O: `feed` whatever arrived)."""

    def __init__(self, max_length: int = MAX_CONTENT_LENGTH) -> None:
        self.max_length = max_length
        self._buffer = bytearray()
        self._body: int | None = None  # the length of the body being read
        self._block = bytearray()  # the header lines read so far
        self._length: int | None = None
        self._problem: str | None = None
        self._dropping = False  # in a run of dropped input (one parse error per run)

    @property
    def pending(self) -> int:
        """Bytes held that are not yet a frame (what an end of input would drop)."""
        return len(self._buffer) + len(self._block)

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while True:
            if self._body is not None:
                if len(self._buffer) < self._body:
                    break
                body = bytes(self._buffer[: self._body])
                del self._buffer[: self._body]
                self._body = None
                self._dropping = False
                events.append(Frame(body))
                continue
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_HEADER_LINE:
                    self._drop_noise(events)
                break
            line = bytes(self._buffer[: end + 1])
            del self._buffer[: end + 1]
            self._line(line, events)
        return events

    def _drop_noise(self, events: list[Event]) -> None:
        """A long run with no line end: drop it, keeping what may start the next header."""
        size = len(self._buffer)
        at = self._buffer.lower().rfind(_LENGTH)
        cut = at if at > 0 and size - at <= MAX_HEADER_LINE else size - len(_LENGTH) + 1
        self._drop(events, bytes(self._buffer[:cut]), "a line too long for a header")
        del self._buffer[:cut]

    def _line(self, line: bytes, events: list[Event]) -> None:
        if line == b"\r\n":
            if not self._block:
                return  # a blank line between frames carries nothing
            if self._problem is None and self._length is not None:
                self._body = self._length
                self._reset()
                return
            self._drop(events, b"", self._problem or "a header block without Content-Length")
            return
        at = line.lower().rfind(_LENGTH)
        if at > 0:  # noise (or a dropped frame's body) glued to the next header
            self._drop(events, line[:at], "bytes that are not a header")
            self._line(line[at:], events)
            return
        header = _HEADER.fullmatch(line)
        if header is None:
            reason = "bytes that are not a header"
            if line.endswith(b"\n") and _HEADER.fullmatch(line[:-1] + b"\r\n"):
                reason = "a header line ending in LF only (headers end in CRLF)"
            self._drop(events, line, reason)
            return
        self._block += line
        name, value = header.groups()
        if name.lower() + b":" != _LENGTH:
            return  # Content-Type and any other header: nothing Baton needs
        if not _DIGITS.fullmatch(value):
            self._problem = f"Content-Length {_shown(value)} is not a decimal byte count"
        elif int(value) > self.max_length:
            self._problem = (
                f"Content-Length {int(value)} is over the limit of {self.max_length} bytes"
            )
        else:
            self._length = int(value)

    def _drop(self, events: list[Event], data: bytes, reason: str) -> None:
        events.append(Dropped(bytes(self._block) + data, reason, not self._dropping))
        self._dropping = True
        self._reset()

    def _reset(self) -> None:
        self._block = bytearray()
        self._length = None
        self._problem = None


def _shown(value: bytes) -> str:
    return repr(value[:24].decode("ascii", "replace")) + ("..." if len(value) > 24 else "")


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
    envelope = _envelope(body)
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


def _envelope(body: bytes, keep: int = 1) -> Any:
    """The message with everything nested deeper than `keep` levels replaced by null."""
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


def _report(protocol: Answering, event: Dropped) -> None:
    if getattr(protocol, "quiet", False):
        pass  # the protocol says it itself (a network connection before its token)
    elif event.first:
        log.warning("dropped %d bytes of input: %s", len(event.data), event.reason)
    else:
        log.info("dropped %d more bytes of input: %s", len(event.data), event.reason)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("dropped bytes: %r", event.data[:200])
    if event.first:
        protocol.send_error(None, JsonRpcParseError(f"malformed frame dropped: {event.reason}"))


async def run_frames(
    read: Callable[[], Awaitable[bytes]],
    protocol: Answering,
    stop_event: threading.Event,
    decoder: FrameDecoder | None = None,
) -> None:
    """Read frames until the input ends or `stop_event` is set; every message is handed on."""
    decoder = decoder or FrameDecoder()
    while not stop_event.is_set():
        data = await read()
        if not data:
            break
        for event in decoder.feed(data):
            if isinstance(event, Frame):
                handle_body(protocol, event.body)
            else:
                _report(protocol, event)
    if decoder.pending:
        log.info("the input ended inside a frame: %d bytes unread", decoder.pending)


def handle_body(protocol: Answering, body: bytes) -> None:
    try:
        dispatch(protocol, body)
    except (SystemExit, KeyboardInterrupt, ConnectionError):
        raise
    except Exception:  # a fault in handling one message never ends the loop
        log.exception("could not handle a message of %d bytes", len(body))


def stdin_reader(stream: BinaryIO, executor: Any = None) -> Callable[[], Awaitable[bytes]]:
    """Chunks of a blocking binary stream, read in `executor` (whatever is available)."""
    read_some: Callable[[int], bytes] = getattr(stream, "read1", None) or stream.read

    def read() -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(executor, read_some, CHUNK)

    return read


def stream_reader(reader: asyncio.StreamReader) -> Callable[[], Awaitable[bytes]]:
    def read() -> Awaitable[bytes]:
        return reader.read(CHUNK)

    return read
