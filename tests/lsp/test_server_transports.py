"""The same server over TCP and WebSocket: `baton serve --tcp/--ws HOST:PORT`."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

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


async def start_network_server(
    tmp_path: Path, flag: str
) -> tuple[asyncio.subprocess.Process, str, int]:
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
        env=server_env(tmp_path / "data"),
    )
    assert process.stderr is not None
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), WAIT_SECONDS)
        assert line, "the server exited before listening"
        found = LISTENING.search(line)
        if found:
            return process, found.group(2).decode(), int(found.group(3))


async def drain(stream: asyncio.StreamReader | None) -> None:
    while stream is not None and await stream.readline():
        pass


@pytest.mark.parametrize("flag", ["--tcp", "--ws"])
async def test_a_session_round_trip_over_the_network(tmp_path: Path, flag: str) -> None:
    process, host, port = await start_network_server(tmp_path, flag)
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
        params = initialize_params(workspace, VSCODE, None)
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
