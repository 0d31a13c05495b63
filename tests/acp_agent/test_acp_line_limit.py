"""`baton acp`'s input line limit: a line past `max_line` (an input that never makes a
line, /dev/zero) is refused as it passes the limit and read to its end unkept."""

from __future__ import annotations

import asyncio
import json
import logging
import tracemalloc
from typing import Any

import pytest

from baton.acp.transport import StdioTransport

WAIT = 30.0
MIB = 1024 * 1024


class Written:
    """The transport's writer: what it wrote, as messages."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.data.splitlines()]


def transport(max_line: int) -> tuple[asyncio.StreamReader, StdioTransport, Written]:
    reader = asyncio.StreamReader(limit=64 * 1024)
    written = Written()
    return reader, StdioTransport(reader, written, max_line=max_line), written  # type: ignore[arg-type]


async def feed(reader: asyncio.StreamReader, data: bytes, total: int) -> None:
    """`total` bytes of `data` repeated, fed as a pipe would: while the reader keeps up."""
    fed = 0
    while fed < total:
        while len(reader._buffer) > 256 * 1024:  # the pipe's reader paused: wait for it
            await asyncio.sleep(0)
        reader.feed_data(data)
        fed += len(data)


async def test_an_input_that_never_makes_a_line_holds_no_more_than_the_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """32 MiB of zero bytes with no line end under a limit of 1 MiB: the line is refused
    (one parse error, one warning naming the limit) while it still goes on, its bytes are
    dropped as they come (the memory held stays near the limit, where it was all the 32
    MiB before), and the next line is read as ever."""
    caplog.set_level(logging.INFO, logger="baton.acp.transport")
    reader, stdio, written = transport(max_line=MIB)
    tracemalloc.start()
    try:
        received = asyncio.ensure_future(stdio.receive())
        await feed(reader, b"\0" * (64 * 1024), 32 * MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not received.done()  # the line has not ended
    await asyncio.sleep(0)
    errors = [m["error"] for m in written.messages()]
    assert [(e["code"], e["data"]["details"]) for e in errors] == [
        (-32700, "the message is over the limit of 1,048,576 bytes")
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "refused a line of more than 1048576 bytes: "
        "the message is over the limit of 1,048,576 bytes"
    ]
    totals = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    said = [f"dropped {mb} MB of a line past the limit in all" for mb in (2, 4, 8, 16, 32)]
    assert totals in (said[:4], said)  # as the total doubles, not once per read
    assert peak < 8 * MIB  # the limit, a piece and the reader's buffer: not the 32 MiB
    request = {"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}}
    reader.feed_data(b"\n" + json.dumps(request).encode() + b"\n")
    assert await asyncio.wait_for(received, WAIT) == request


async def test_a_request_past_the_limit_is_answered_under_its_id() -> None:
    """A prompt whose image makes its line too long: its client is told under the id
    (invalid_params), not left waiting for an answer that never comes; a line of the
    limit's length is read whole."""
    reader, stdio, written = transport(max_line=MIB)
    head = b'{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"d": "'
    reader.feed_data(head + b"x" * (2 * MIB) + b'"}}\n')
    fits = {"jsonrpc": "2.0", "id": 8, "method": "session/list", "params": {"d": ""}}
    line = json.dumps(fits).encode()
    fits["params"]["d"] = "y" * (MIB - len(line))
    reader.feed_data(json.dumps(fits).encode() + b"\n")
    assert await asyncio.wait_for(stdio.receive(), WAIT) == fits
    await asyncio.sleep(0)
    (answer,) = written.messages()
    assert answer["id"] == 7
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == "the message is over the limit of 1,048,576 bytes"
