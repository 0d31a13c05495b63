"""The agent's stdio as the ACP SDK's message transport: newline-delimited JSON-RPC read
from stdin, and every outgoing message (the SDK's answers and requests, the outbox's
updates) written to stdout in the order it was handed over, those of one loop turn in
one write. A line that is not JSON is answered with a JSON-RPC parse error, one that is
no JSON-RPC 2.0 message with an invalid request; a notification no handler takes (an
unknown method, params it cannot read) is dropped with a line in the log. A line past
`MAX_LINE` is refused as it passes the limit and read on to its end unkept, so an input
that never makes a line (/dev/zero) holds no more than that. The pipe to the client tells
its loss (the client's reader gone, a write refused), which ends the agent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from typing import Any

from baton.acp.errors import quoted
from baton.contract.envelope import INVALID_REQUEST, envelope_problem, shallow, usable_id

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_PARAMS = -32602
MAX_LINE = 64 * 1024 * 1024  # bytes in one message line, as in one frame over LSP
HEAD = 64 * 1024  # a refused line's start, where its id and method are looked for
MB = 1024 * 1024
# strings (so that their brackets do not count) and brackets: a refused line's first level
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


# the notifications the agent takes, and the string field each needs in its params
NOTIFICATIONS = {"session/cancel": "sessionId"}


def _taken(notification: dict[str, Any]) -> bool:
    """Whether a handler takes `notification`: an extension's (`_…`, which the SDK drops
    quietly), or one of NOTIFICATIONS with params it can read."""
    method = notification.get("method")
    if isinstance(method, str) and method.startswith("_"):
        return True
    field = NOTIFICATIONS.get(method) if isinstance(method, str) else None
    params = notification.get("params")
    return field is not None and isinstance(params, dict) and isinstance(params.get(field), str)


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def _coded(error: dict[str, Any]) -> dict[str, Any]:
    """An invalid-params error with the stable `data.code` every refusal carries: the SDK's
    own (params its schema refuses) come with `data.errors` alone."""
    data = error.get("data")
    if error.get("code") != INVALID_PARAMS or (isinstance(data, dict) and "code" in data):
        return error
    fields = data if isinstance(data, dict) else {} if data is None else {"details": data}
    return {**error, "data": {"code": "invalid_params", **fields}}


class StdioTransport:
    """What `AgentSideConnection` speaks through (its `Transport`: `send`, `receive`,
    `close`), plus `post`: a message queued synchronously, so that an update raised by a
    synchronous listener keeps its place among the SDK's own messages without a task, a
    queue hop or a write of its own."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_line: int = MAX_LINE,
    ) -> None:
        self._reader, self._writer = reader, writer
        self.max_line = max_line
        self._pending: list[bytes] = []
        self._scheduled = False
        self._closed = False

    def post(self, message: dict[str, Any]) -> None:
        """Queue `message` behind everything handed over before it; it is written at the
        end of this turn of the loop, with whatever else is posted meanwhile."""
        if self._closed:
            return  # the client went away: nobody reads
        self._pending.append(encode(message))
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def drop_output(self) -> None:
        """Nothing handed over from now on is written: the client no longer reads."""
        self._closed = True

    def _flush(self) -> None:
        self._scheduled = False
        if not self._pending or self._closed:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            self._writer.write(data)
        except (ConnectionError, RuntimeError) as exc:  # stdout closed under us
            log.debug("stdout closed: %s", exc)
            self._closed = True

    async def drain(self) -> None:
        """Returns once everything handed over so far is written to the pipe (and the
        pipe's buffer is below its high-water mark)."""
        self._flush()
        if not self._closed:
            await self._writer.drain()

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("the client closed the agent's stdout")
        if isinstance(message.get("error"), dict):  # never the whole input quoted back
            message = {**message, "error": quoted(_coded(message["error"]))}
        self.post(message)
        await self.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or None at the end of stdin."""
        while True:
            line = await self._line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except RecursionError:  # nested past what the decoder reaches: never read whole
                self._too_deep(line)
                continue
            except ValueError as exc:
                self._parse_error(f"not JSON: {exc}")
                continue
            if not isinstance(message, dict):
                self._parse_error("a JSON-RPC message is a JSON object")
                continue
            problem = envelope_problem(message)
            if problem is not None:
                self._invalid_request(message.get("id"), problem)
                continue
            if "id" not in message and not _taken(message):
                # never answered; the SDK would log each one with a traceback
                method = str(message.get("method"))[:80]
                log.warning("dropped a notification no handler takes: %s", method)
                continue
            return message

    def _parse_error(self, detail: str) -> None:
        error = {"code": PARSE_ERROR, "message": "Parse error", "data": {"details": detail}}
        self.post({"jsonrpc": "2.0", "id": None, "error": error})

    def _too_deep(self, line: bytes) -> None:
        """A message nested too deep to decode (it ended the agent): a request with a
        usable id and method is answered invalid_params, a notification dropped, anything
        else an invalid request."""
        envelope = shallow(line)
        fields = envelope if isinstance(envelope, dict) else {}
        detail = "the message nests too deep to be read"
        log.warning("refused a message of %d bytes: %s", len(line), detail)
        self._refused(fields, detail)

    def _too_long(self, start: bytes) -> None:
        """A line past `max_line`, refused as it passes it (its rest is read unkept),
        `start` its first HEAD bytes: a request whose id and method they give (`_head`) is
        answered invalid_params, so that its client does not wait for good, a notification
        dropped, anything else a parse error."""
        detail = f"the message is over the limit of {self.max_line:,} bytes"
        log.warning("refused a line of more than %d bytes: %s", self.max_line, detail)
        fields = _head(start)
        if fields is None:
            self._parse_error(detail)
        else:
            self._refused(fields, detail)

    def _refused(self, fields: dict[str, Any], detail: str) -> None:
        msg_id, method = fields.get("id"), fields.get("method")
        if usable_id(msg_id) and isinstance(method, str):
            error = {"code": INVALID_PARAMS, "message": detail, "data": {"code": "invalid_params"}}
            self.post({"jsonrpc": "2.0", "id": msg_id, "error": error})
        elif not (isinstance(method, str) and "id" not in fields):
            self._invalid_request(msg_id, detail)

    def _invalid_request(self, msg_id: Any, detail: str) -> None:
        """Valid JSON that is no JSON-RPC 2.0 message: answered, with its id when usable."""
        error = {"code": INVALID_REQUEST, "message": "Invalid Request", "data": {"details": detail}}
        self.post({"jsonrpc": "2.0", "id": msg_id if usable_id(msg_id) else None, "error": error})

    async def _line(self) -> bytes:
        """The next line of at most `max_line` bytes (the reader's limit bounds each
        piece), or b"" at the end of input. A longer one is refused as it passes the
        limit, then read to its end without being kept: said at its start, then by its
        total as that doubles from 1 MB, as `baton serve` says a run of dropped input."""
        pieces: list[bytes] = []
        size, dropping = 0, False
        while True:
            ended = True
            try:
                piece = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                piece, ended = await self._reader.readexactly(exc.consumed), False
            except asyncio.IncompleteReadError as exc:
                piece = exc.partial
                if dropping or not (pieces or piece):
                    return b""  # the end of input (a refused line's end with it)
            before, size = size, size + len(piece)
            if dropping:
                if (mb := _doubled(before, size)) is not None:
                    log.info("dropped %d MB of a line past the limit in all", mb)
            elif size - piece.endswith(b"\n") > self.max_line:  # its line end not counted
                self._too_long(b"".join(kept[:HEAD] for kept in [*pieces, piece])[:HEAD])
                pieces, dropping = [], True
            else:
                pieces.append(piece)
            if ended and dropping:
                pieces, size, dropping = [], 0, False  # read on: the next line
            elif ended:
                return b"".join(pieces)

    async def close(self) -> None:
        self._flush()
        self._closed = True
        with contextlib.suppress(ConnectionError, RuntimeError):  # the client went away
            await self._writer.drain()


def _head(start: bytes) -> dict[str, Any] | None:
    """The fields of a message's first level that come before its first nested value
    (`{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": ...`), read from
    the start of a line too long to keep; None when that start is no JSON object's."""
    depth, key = 0, 0
    for token in _TOKEN.finditer(start):
        mark = token.group()
        if mark in (b"{", b"["):
            depth += 1
            if depth == 2:  # the value of the key that starts at `key`
                return _object(start[:key].rstrip().rstrip(b",") + b"}") if key else None
        elif mark in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and start[token.end() :].lstrip().startswith(b":"):
            key = token.start()
    return None


def _object(text: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _doubled(before: int, after: int) -> int | None:
    """The largest power of two of megabytes (1, 2, 4 ...) passed going from `before` to
    `after` bytes, or None."""
    passed, mb = None, 1
    while mb * MB <= after:
        if mb * MB > before:
            passed = mb
        mb *= 2
    return passed
