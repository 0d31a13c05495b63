"""Fixtures for the server tests: a real `python -m baton serve` per test, over stdio."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import NEOVIM, VSCODE, Harness, spawn_stdio, start
from test_server_malformed import RawPipe

Starter = Callable[..., Awaitable[Harness]]


@pytest_asyncio.fixture
async def start_server(tmp_path: Path) -> AsyncIterator[Starter]:
    """Start servers with custom options; every one is shut down after the test."""
    started: list[Harness] = []

    async def starter(client_name: str = VSCODE, **options: Any) -> Harness:
        harness = await start(tmp_path, client_name, **options)
        started.append(harness)
        return harness

    yield starter
    for harness in started:
        await harness.close()


@pytest_asyncio.fixture
async def lsp(start_server: Starter) -> Harness:
    """A server initialized by a client with VS Code's recorded capabilities."""
    return await start_server(VSCODE)


@pytest_asyncio.fixture(params=[VSCODE, NEOVIM])
async def any_lsp(request: pytest.FixtureRequest, start_server: Starter) -> Harness:
    """The same test with VS Code's and Neovim's recorded capabilities."""
    return await start_server(request.param)


@pytest_asyncio.fixture
async def pipe(tmp_path: Path) -> AsyncIterator[RawPipe]:
    """A server over a raw pipe, initialized, for tests that send bytes of their own."""
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    raw = RawPipe(process)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}
    await raw.send(init)
    await raw.response(0)
    try:
        yield raw
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
