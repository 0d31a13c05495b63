"""Reading JSON-RPC off the wire: frames, their limits, resynchronising after malformed input.

pygls's own reader trusts every header: a huge `Content-Length` kills or exhausts the
server, and any malformed frame glues its body to the next header so that nothing is read
again. Baton reads frames itself: a header block is only used when it is well formed
(`Name: value` lines ending in CRLF, one decimal `Content-Length` no larger than
`MAX_CONTENT_LENGTH`); anything else is dropped up to the next header that could start a
frame, said once on stderr (sizes and reasons; the bytes only at DEBUG; a long run's total
as it doubles from a megabyte) and answered with
one parse error per run of dropped input. Each frame's body is decoded and handed on by
`message_body.py`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pygls.exceptions import JsonRpcParseError

from baton.lsp.transport.message_body import Answering, handle_body

log = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 64 * 1024 * 1024  # bytes in one message body
MAX_BEFORE_TOKEN = 1024 * 1024  # a network connection's first message (its initialize)
MAX_HEADER_LINE = 8 * 1024  # a longer line without a line end is noise
CHUNK = 64 * 1024
MB = 1024 * 1024

_HEADER = re.compile(rb"([A-Za-z0-9][A-Za-z0-9_-]*):[ \t]*(.*?)[ \t]*\r\n", re.S)
_LENGTH = b"content-length:"
_DIGITS = re.compile(rb"[0-9]{1,20}")


@dataclass(frozen=True)
class Frame:
    body: bytes


@dataclass(frozen=True)
class Dropped:
    """Input that was not part of any usable frame; `first` of a run since the last frame,
    whose bytes dropped so far, these included, are `total`."""

    data: bytes
    reason: str
    first: bool
    total: int = 0


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
        self._run = 0  # the bytes the run has dropped

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
        dropped = bytes(self._block) + data
        self._run = len(dropped) + (self._run if self._dropping else 0)
        events.append(Dropped(dropped, reason, not self._dropping, self._run))
        self._dropping = True
        self._reset()

    def _reset(self) -> None:
        self._block = bytearray()
        self._length = None
        self._problem = None


def _shown(value: bytes) -> str:
    return repr(value[:24].decode("ascii", "replace")) + ("..." if len(value) > 24 else "")


def _doubled(before: int, after: int) -> int | None:
    """The largest power of two of megabytes (1, 2, 4 ...) that a run passed as it went
    from `before` to `after` bytes dropped, or None."""
    passed = None
    mb = 1
    while mb * MB <= after:
        if mb * MB > before:
            passed = mb
        mb *= 2
    return passed


def _report(protocol: Answering, event: Dropped) -> None:
    if getattr(protocol, "quiet", False):
        pass  # the protocol says it itself (a network connection before its token)
    elif event.first:
        log.warning("dropped %d bytes of input: %s", len(event.data), event.reason)
    elif (mb := _doubled(event.total - len(event.data), event.total)) is not None:
        # a long run (a device or another protocol on the input) is said as its total
        # doubles, not once per read: megabytes of stderr a second, else
        log.info("dropped %d MB of input in all since the last frame: %s", mb, event.reason)
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


def stream_reader(reader: asyncio.StreamReader) -> Callable[[], Awaitable[bytes]]:
    def read() -> Awaitable[bytes]:
        return reader.read(CHUNK)

    return read
