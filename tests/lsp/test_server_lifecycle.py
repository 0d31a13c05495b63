"""The LSP lifecycle over a raw pipe: the exit code `exit` leaves."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_harness import WAIT_SECONDS, spawn_stdio
from test_server_malformed import RawPipe


def initialize(msg_id: int, **options: object) -> dict[str, object]:
    params = {"capabilities": {}, "initializationOptions": options or None}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


async def exit_code(pipe: RawPipe) -> int:
    await pipe.send({"jsonrpc": "2.0", "method": "exit"})
    return await asyncio.wait_for(pipe.process.wait(), WAIT_SECONDS)


async def test_exit_after_shutdown_exits_with_code_0(tmp_path: Path) -> None:
    pipe = RawPipe(await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL))
    await pipe.send(initialize(1))
    await pipe.response(1)
    await pipe.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert (await pipe.response(2))["result"] is None
    assert await exit_code(pipe) == 0


async def test_exit_without_shutdown_exits_with_code_1(tmp_path: Path) -> None:
    pipe = RawPipe(await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL))
    await pipe.send(initialize(1))
    await pipe.response(1)
    assert await exit_code(pipe) == 1
