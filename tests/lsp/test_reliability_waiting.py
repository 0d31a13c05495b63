"""R5, the network: connections that never show the token. They only wait for the slot,
bounded in time (`BATON_TOKEN_TIMEOUT`) and number, so they never keep the editor out; a
flood of half-open handshakes under `ulimit -n 1024` neither shuts it out nor fills stderr."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import resource
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import WAIT_SECONDS, Harness
from test_server_transports import (
    StderrLines,
    connect_client,
    start_watched,
    stop,
)

from baton import protocol
from baton.lsp.transport.admission import MAX_WAITING

SEED = 20261201
FLOOD = 1_100  # more than the server's descriptors
SERVER_FILES = 1024  # the server's `ulimit -n`
Silent = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def start(
    tmp_path: Path, flag: str, timeout: float, files: int | None = None
) -> tuple[asyncio.subprocess.Process, StderrLines, str, int, str]:
    """A server on a free loopback port with the given token timeout (and descriptors)."""

    def limit_files() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    env = {"BATON_TOKEN_TIMEOUT": str(timeout)}
    return await start_watched(tmp_path, flag, env, limit_files)


async def editor(tmp_path: Path, flag: str, host: str, port: int, token: str) -> Harness:
    """The editor's client, initialized with the token (turned away: a timeout, not a hang)."""
    lsp, _ = await asyncio.wait_for(connect_client(tmp_path, flag, host, port, token), WAIT_SECONDS)
    return lsp


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """Whether the server closes this connection (EOF or reset) within WAIT_SECONDS."""
    try:
        while await asyncio.wait_for(reader.read(65536), WAIT_SECONDS):
            pass  # an HTTP error answer to a half-open handshake, then the close
    except ConnectionError:
        return True
    except TimeoutError:
        return False
    return True


async def still_open(reader: asyncio.StreamReader) -> bool:
    """Whether the connection is open and silent (nothing read within a short look)."""
    try:
        await asyncio.wait_for(reader.read(1), 0.5)
    except TimeoutError:
        return True
    except ConnectionError:
        return False
    return False


async def half_open(host: str, port: int, style: int = 0) -> Silent | None:
    """A connection that says nothing (style 0) or starts a WebSocket handshake (1: the
    request line, 2: some headers) and never ends it."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), WAIT_SECONDS)
    except (OSError, TimeoutError):
        return None  # the server's backlog was full: the flood's own problem
    if style == 1:
        writer.write(b"GET / HTTP/1.1\r\n")
    elif style == 2:
        writer.write(f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n".encode())
    return reader, writer


def close_all(connections: list[Silent | None]) -> None:
    for connection in connections:
        if connection is not None:
            connection[1].transport.abort()


async def test_a_silent_connection_does_not_keep_the_editor_out(tmp_path: Path) -> None:
    process, stderr, host, port, token = await start(tmp_path, "--tcp", timeout=60)
    silent: list[Silent | None] = []
    try:
        # connections that say nothing, opened before the editor's: they get no slot
        for _ in range(3):
            silent.append(await half_open(host, port))
        lsp = await editor(tmp_path, "--tcp", host, port, token)
        assert (await lsp.create(title="editor"))["title"] == "editor"
        # once a client is served, the waiting connections are closed
        for connection in silent:
            assert connection is not None and await closed_by_server(connection[0])
        assert "sessions" in await lsp.request(protocol.SESSION_LIST)
        await lsp.close()
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
        await stderr.task
        assert "Traceback" not in stderr.text
    finally:
        close_all(silent)
        await stop(process, stderr)


async def test_a_silent_websocket_does_not_keep_the_editor_out(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    process, stderr, host, port, token = await start(tmp_path, "--ws", timeout=60)
    silent: list[Any] = []
    try:
        # handshakes completed without the token, then nothing: they get no slot
        for _ in range(3):
            silent.append(await connect(f"ws://{host}:{port}/"))
        lsp = await editor(tmp_path, "--ws", host, port, token)
        assert (await lsp.create(title="editor"))["title"] == "editor"
        for websocket in silent:  # closed once a client is served
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(websocket.recv(), WAIT_SECONDS)
        await lsp.close()
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
        await stderr.task
        assert "Traceback" not in stderr.text
    finally:
        for websocket in silent:
            if websocket.transport is not None:
                websocket.transport.abort()
        await stop(process, stderr)


async def test_a_connection_that_shows_no_token_in_time_is_closed(tmp_path: Path) -> None:
    process, stderr, host, port, token = await start(tmp_path, "--tcp", timeout=0.5)
    silent: list[Silent | None] = []
    try:
        silent.append(await half_open(host, port))
        assert silent[0] is not None and await closed_by_server(silent[0][0])
        await stderr.wait_for("no token within 0.5 s")
        lsp = await editor(tmp_path, "--tcp", host, port, token)  # serves on
        assert "sessions" in await lsp.request(protocol.SESSION_LIST)
        await lsp.close()
    finally:
        close_all(silent)
        await stop(process, stderr)


async def test_waiting_connections_are_capped_oldest_closed_first(tmp_path: Path) -> None:
    process, stderr, host, port, _ = await start(tmp_path, "--tcp", timeout=60)
    silent: list[Silent | None] = []
    extra = 8
    try:
        for _ in range(MAX_WAITING + extra):
            silent.append(await half_open(host, port))
        # the oldest make room (the timeout is a minute away); the newest still wait
        for connection in silent[:extra]:
            assert connection is not None and await closed_by_server(connection[0])
        newest = silent[-1]
        assert newest is not None and await still_open(newest[0])
        await stderr.wait_for(f"more than {MAX_WAITING} connections waited for the token")
    finally:
        close_all(silent)
        await stop(process, stderr)


@pytest.mark.parametrize("flag", ["--ws", "--tcp"])
async def test_a_flood_of_half_open_handshakes_neither_shuts_out_nor_floods(
    tmp_path: Path, flag: str
) -> None:
    own, most = resource.getrlimit(resource.RLIMIT_NOFILE)
    if own != resource.RLIM_INFINITY and own < 2 * FLOOD:  # the flood's side needs more
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2 * FLOOD, most), most))
    process, stderr, host, port, token = await start(tmp_path, flag, 60, files=SERVER_FILES)
    rng = random.Random(SEED)
    flood: list[Silent | None] = []
    try:
        for _ in range(FLOOD // 100):  # in waves, as a scanner would open them
            flood += await asyncio.gather(
                *(half_open(host, port, rng.randrange(3)) for _ in range(100))
            )
        assert sum(c is not None for c in flood) >= FLOOD - 100
        lsp = await editor(tmp_path, flag, host, port, token)
        assert (await lsp.create(title="through the flood"))["title"] == "through the flood"
        if flag == "--ws":  # and a handshake-token client is turned away, not hung
            from websockets.asyncio.client import connect
            from websockets.exceptions import ConnectionClosed

            async with connect(f"ws://{host}:{port}/?token={token}") as second:
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(second.recv(), WAIT_SECONDS)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        await lsp.close()
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
        await stderr.task
        assert "Too many open files" not in stderr.text
        assert "Traceback" not in stderr.text
        assert len(stderr.lines) < 40, stderr.text[-2000:]
    finally:
        close_all(flood)
        with contextlib.suppress(Exception):
            await stop(process, stderr)


async def turned_away(flag: str, host: str, port: int) -> bool:
    """A connection while a client is served (a WebSocket one shows no token): whether the
    server closes it at once (a WebSocket one with 1013)."""
    if flag == "--tcp":
        connection = await half_open(host, port)
        return connection is not None and await closed_by_server(connection[0])
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with connect(f"ws://{host}:{port}/") as websocket:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(websocket.recv(), WAIT_SECONDS)
    return closed.value.rcvd is not None and closed.value.rcvd.code == 1013


@pytest.mark.parametrize("flag", ["--tcp", "--ws"])
async def test_connections_turned_away_while_a_client_is_served_are_said_as_counts(
    tmp_path: Path, flag: str
) -> None:
    """Each connection refused while the slot is taken was a line of its own on stderr:
    a scanner's thousand connections, a thousand lines in the editor's log."""
    process, stderr, host, port, token = await start(tmp_path, flag, timeout=60)
    try:
        lsp = await editor(tmp_path, flag, host, port, token)
        refused = 60
        for _ in range(refused):
            assert await turned_away(flag, host, port)
        assert "sessions" in await lsp.request(protocol.SESSION_LIST)  # served on
        await lsp.close()
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
        await stderr.task
        said = [line for line in stderr.lines if "one client at a time" in line]
        assert len(said) < 10, stderr.text[-2000:]  # a line, then counts every 10 s at most
        assert "refused a connection from 127.0.0.1:" in said[0]
        counts = [re.search(r"refused (\d+) more connections", line) for line in said]
        alone = sum("refused a connection from" in line for line in said)
        # every one is told, the last count when the client left at the latest
        assert alone + sum(int(found[1]) for found in counts if found) == refused, said
        assert "Traceback" not in stderr.text
    finally:
        await stop(process, stderr)
