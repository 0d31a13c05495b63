"""Malformed frames over a raw pipe: each dropped with a parse error, the server serving on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsp_harness import WAIT_SECONDS, spawn_stdio
from test_server_malformed import PARSE_ERROR, RawPipe

from baton.lsp.transport.framing import MAX_CONTENT_LENGTH, Dropped, Frame, FrameDecoder


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: int, method: str = "shutdown") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}).encode()


BODY = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'

# each is sent, then a valid request that must be answered
MALFORMED = {
    "huge length": b"Content-Length: 99999999999999999999\r\n\r\n" + BODY,
    "over the limit": b"Content-Length: %d\r\n\r\n" % (MAX_CONTENT_LENGTH + 1) + BODY,
    "allocating": b"Content-Length: 100000000000\r\n\r\n" + BODY,
    "negative": b"Content-Length: -5\r\n\r\n" + BODY,
    "not a number": b"Content-Length: twelve\r\n\r\n" + BODY,
    "hex": b"Content-Length: 0x39\r\n\r\n" + BODY,
    "float": b"Content-Length: 57.0\r\n\r\n" + BODY,
    "LF only": b"Content-Length: %d\n\n" % len(BODY) + BODY,
    "NUL in the header": b"Content-Length: 5\x007\r\n\r\n" + BODY,
    "no length": b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + BODY,
    "binary noise": bytes(range(256)) * 4 + b"\r\n\x00\xff\n\n\r\n",
    "noise without a line end": b"\x8f" * 20000,
}


async def write(pipe: RawPipe, data: bytes) -> None:
    assert pipe.process.stdin is not None
    pipe.process.stdin.write(data)
    await pipe.process.stdin.drain()


@pytest.mark.parametrize("name", list(MALFORMED))
async def test_a_malformed_frame_is_answered_and_the_next_one_served(
    pipe: RawPipe, name: str
) -> None:
    await write(pipe, MALFORMED[name])
    answer = await pipe.response(None)
    assert answer["error"]["code"] == PARSE_ERROR
    assert "Traceback" not in json.dumps(answer)
    await write(pipe, frame(request(7, "baton/session/list")))
    assert "result" in await pipe.response(7)
    assert pipe.process.returncode is None


async def test_every_malformed_frame_in_a_row_then_a_valid_one(pipe: RawPipe) -> None:
    await write(pipe, b"".join(MALFORMED.values()) + frame(request(9, "baton/session/list")))
    assert "result" in await pipe.response(9)


async def test_dropped_input_is_logged_without_its_bytes(tmp_path: Path) -> None:
    process = await spawn_stdio(tmp_path / "data")
    secret_body = b'{"jsonrpc": "2.0", "method": "x", "params": {"t": "SECRET-BODY"}}'
    exit_body = b'{"jsonrpc": "2.0", "method": "exit"}'
    data = b"Content-Length: -1\r\n\r\n" + secret_body + frame(exit_body)
    out, err = await asyncio.wait_for(process.communicate(data), WAIT_SECONDS)
    assert b"dropped" in err and b"Content-Length" in err
    assert b"SECRET-BODY" not in err
    assert b'"code": -32700' in out


async def test_a_long_run_of_dropped_input_is_said_in_a_few_lines(tmp_path: Path) -> None:
    """Input that never makes a frame (`baton serve < /dev/zero`, a client speaking another
    protocol) was said once per 64 KB read, at the default level: 4 MB of stderr a second
    from /dev/zero, 30 MB from /dev/urandom, for as long as it lasted. The run's first
    drop is said, then its total each time it doubles from 1 MB (here 1, 2, 4, 8 and 16 MB),
    the bytes dropped counted all the same."""
    process = await spawn_stdio(tmp_path / "data")
    exit_body = b'{"jsonrpc": "2.0", "method": "exit"}'
    data = b"\0" * (16 * 1024 * 1024) + frame(exit_body)
    out, err = await asyncio.wait_for(process.communicate(data), WAIT_SECONDS)
    said = [line for line in err.decode().splitlines() if "dropped" in line]
    assert said[0].endswith(" dropped 65522 bytes of input: a line too long for a header")
    assert [line.split("framing: ")[1].split(":")[0] for line in said[1:]] == [
        f"dropped {mb} MB of input in all since the last frame" for mb in (1, 2, 4, 8, 16)
    ]
    assert out.count(b'"code": -32700') == 1  # one parse error for the run


def test_decoder_resynchronises_on_the_next_header() -> None:
    decoder = FrameDecoder()
    events = decoder.feed(b"Content-Length: -3\r\n\r\n{}garbage" + frame(BODY) + frame(BODY))
    dropped = [e for e in events if isinstance(e, Dropped)]
    assert [e.first for e in dropped] == [True, False]
    assert [e for e in events if isinstance(e, Frame)] == [Frame(BODY), Frame(BODY)]


def test_decoder_reads_frames_split_anywhere() -> None:
    data = frame(BODY) + b"Content-Type: x\r\n" + frame(BODY)
    for cut in range(len(data)):
        decoder = FrameDecoder()
        events = decoder.feed(data[:cut]) + decoder.feed(data[cut:])
        assert events == [Frame(BODY), Frame(BODY)], cut


def test_decoder_finds_a_header_after_long_noise_split_anywhere() -> None:
    data = b"x" * 20000 + frame(BODY)
    for cut in range(19990, 20020):
        decoder = FrameDecoder()
        events = decoder.feed(data[:cut]) + decoder.feed(data[cut:])
        assert events[-1] == Frame(BODY), cut
        assert sum(e.first for e in events if isinstance(e, Dropped)) == 1
