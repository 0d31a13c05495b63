"""The same server over TCP and WebSocket: `baton serve --tcp/--ws HOST:PORT`."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import (
    VSCODE,
    WAIT_SECONDS,
    Harness,
    Recorder,
    conversation,
    initialize_params,
    make_client,
    server_env,
)

from baton import protocol
from baton.lsp.server import parse_address

LISTENING = re.compile(rb"baton: listening on (tcp|ws)://([\d.]+):(\d+)")
TOKEN = re.compile(rb"baton: token (\S+)")


async def start_network_server(
    tmp_path: Path,
    flag: str,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[asyncio.subprocess.Process, str, int, str]:
    """A server on a free loopback port: (process, host, port, the token it printed)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "baton",
        "serve",
        flag,
        "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(tmp_path / "data", env),
        preexec_fn=preexec_fn,
    )
    assert process.stderr is not None
    token = (env or {}).get("BATON_TOKEN", "")
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), WAIT_SECONDS)
        assert line, "the server exited before listening"
        if printed := TOKEN.search(line):
            token = printed.group(1).decode()
        found = LISTENING.search(line)
        if found:
            return process, found.group(2).decode(), int(found.group(3)), token


async def drain(stream: asyncio.StreamReader | None) -> None:
    while stream is not None and await stream.readline():
        pass


class StderrLines:
    """Every line the server writes on stderr, read as it comes (the pipe never fills)."""

    def __init__(self, stream: asyncio.StreamReader | None) -> None:
        self.lines: list[str] = []
        self._grew = asyncio.Event()
        self.task = asyncio.ensure_future(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader | None) -> None:
        while stream is not None and (line := await stream.readline()):
            self.lines.append(line.decode(errors="replace"))
            self._grew.set()
        self._grew.set()

    async def wait_for(self, text: str) -> str:
        async def find() -> str:
            while True:
                self._grew.clear()
                for line in self.lines:
                    if text in line:
                        return line
                assert not self.task.done(), f"stderr closed without {text!r}"
                await self._grew.wait()

        return await asyncio.wait_for(find(), WAIT_SECONDS)

    @property
    def text(self) -> str:
        return "".join(self.lines)


async def start_watched(
    tmp_path: Path,
    flag: str,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[asyncio.subprocess.Process, StderrLines, str, int, str]:
    """`start_network_server`, its stderr read from the moment it listens."""
    process, host, port, token = await start_network_server(tmp_path, flag, env, preexec_fn)
    return process, StderrLines(process.stderr), host, port, token


async def stop(process: asyncio.subprocess.Process, stderr: StderrLines) -> None:
    if process.returncode is None:
        process.kill()
        await process.wait()
    await stderr.task


async def connect_client(
    tmp_path: Path, flag: str, host: str, port: int, token: str
) -> tuple[Harness, Recorder]:
    """A pytest-lsp client over the network, initialized with the server's token."""
    recorder = Recorder()
    client = make_client(recorder)
    if flag == "--tcp":
        await client.start_tcp(host, port)
    else:
        await client.start_ws(host, port)
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    params = initialize_params(workspace, VSCODE, {"batonToken": token})
    lsp = Harness(client, recorder, workspace, tmp_path / "data", params.capabilities)
    lsp.initialize_result = await client.initialize_session(params)
    return lsp, recorder


async def second_connection_is_closed(flag: str, host: str, port: int) -> None:
    """Connect again while the first client is connected: the server closes at once."""
    if flag == "--tcp":
        reader, writer = await asyncio.open_connection(host, port)
        try:
            assert await asyncio.wait_for(reader.read(), WAIT_SECONDS) == b""  # EOF, no data
        finally:
            writer.close()
        return
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with connect(f"ws://{host}:{port}") as websocket:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(websocket.recv(), WAIT_SECONDS)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013


@pytest.mark.parametrize("flag", ["--tcp", "--ws"])
async def test_a_session_round_trip_over_the_network(tmp_path: Path, flag: str) -> None:
    process, host, port, token = await start_network_server(tmp_path, flag)
    stderr = asyncio.ensure_future(drain(process.stderr))  # never let the pipe fill up
    assert host == "127.0.0.1"  # loopback unless a host is named
    recorder = Recorder()
    client = make_client(recorder)
    try:
        if flag == "--tcp":
            await client.start_tcp(host, port)
        else:
            await client.start_ws(host, port)
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        params = initialize_params(workspace, VSCODE, {"batonToken": token})
        lsp = Harness(client, recorder, workspace, tmp_path / "data", params.capabilities)
        lsp.initialize_result = await client.initialize_session(params)

        sid = (await lsp.create(title="remote"))["sessionId"]
        ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
        published = await lsp.latest_diagnostics(sid)
        assert published.diagnostics[0].code == "context-usage"
        result = await lsp.command(
            protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[1]}
        )
        assert result["summarizedMessageIds"] == ids[:2]
        assert (await lsp.get(sid))["messages"][0]["kind"] == "summary"

        await client.shutdown_async(None)
        client.exit(None)
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await client.stop()
        await stderr


def test_addresses_default_to_loopback_and_reject_nonsense() -> None:
    assert parse_address("8123") == ("127.0.0.1", 8123)
    assert parse_address("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_address("[::1]:9001") == ("::1", 9001)
    for bad in ("host:port", "127.0.0.1:70000", ""):
        with pytest.raises(ValueError):
            parse_address(bad)


@pytest.mark.parametrize("flag", ["--tcp", "--ws"])
async def test_a_second_client_is_turned_away_and_the_first_keeps_working(
    tmp_path: Path, flag: str
) -> None:
    process, stderr, host, port, token = await start_watched(tmp_path, flag)
    lsp, recorder = await connect_client(tmp_path, flag, host, port, token)
    try:
        sid = (await lsp.create(title="first"))["sessionId"]
        await second_connection_is_closed(flag, host, port)
        line = await stderr.wait_for("refused a connection")
        assert "one client at a time" in line

        # the first client's requests are still answered, on its own connection
        ids = (await lsp.append(sid, *conversation(2)))["messageIds"]
        assert len(ids) == 4
        assert [s["sessionId"] for s in (await lsp.request(protocol.SESSION_LIST))["sessions"]] == [
            sid
        ]
        await recorder.notification(protocol.USAGE_CHANGED, lambda p: p["sessionId"] == sid)

        await lsp.client.shutdown_async(None)
        lsp.client.exit(None)
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
        await stderr.task
        assert "Traceback" not in stderr.text
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await lsp.client.stop()
        await stderr.task


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(token: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"capabilities": {}}
    if token is not None:
        params["initializationOptions"] = {"batonToken": token}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


async def initialize_then_vanish(flag: str, host: str, port: int, token: str) -> None:
    """A raw client: initialize, read the answer, then drop the connection (no exit)."""
    if flag == "--tcp":
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(framed(initialize(token)))
        await writer.drain()
        assert (await asyncio.wait_for(reader.readline(), WAIT_SECONDS)).startswith(
            b"Content-Length"
        )
        writer.transport.abort()  # a reset, as when the editor is killed
        return
    from websockets.asyncio.client import connect

    websocket = await connect(f"ws://{host}:{port}")
    await websocket.send(json.dumps(initialize(token)))
    assert json.loads(await asyncio.wait_for(websocket.recv(), WAIT_SECONDS))["id"] == 1
    assert websocket.transport is not None
    websocket.transport.abort()


@pytest.mark.parametrize("flag", ["--tcp", "--ws"])
async def test_a_client_that_vanishes_ends_the_server_without_a_traceback(
    tmp_path: Path, flag: str
) -> None:
    process, stderr, host, port, token = await start_watched(tmp_path, flag)
    try:
        await initialize_then_vanish(flag, host, port, token)
        await asyncio.wait_for(process.wait(), WAIT_SECONDS)
        await stderr.task
        assert "Traceback" not in stderr.text
    finally:
        await stop(process, stderr)
