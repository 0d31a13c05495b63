"""`exit` while an offline compaction's worker thread still runs: the process ends then,
the compaction cancelled before it committed, and the transcript reads back whole."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from lsp_harness import WAIT_SECONDS, server_env
from test_server_lifecycle import (
    initialize,
    read_back,
    request,
    session_with,
    shutdown_then_exit,
    started,
)
from test_server_malformed import RawPipe
from test_server_transports import LISTENING, TOKEN

from baton import protocol
from baton_testkit.holding import holding, no_traceback, until_held

# the summary is never written: the compaction holds its worker thread
SUMMARY = "baton.core.compaction.engine.summarize"


class Connection:
    """A TCP connection's two ends where RawPipe reads a process's pipes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stdout, self.stdin = reader, writer


async def test_exit_ends_the_process_while_an_offline_compactions_thread_still_runs(
    tmp_path: Path,
) -> None:
    """`shutdown` then `exit` while an offline compaction ran in its worker thread: the
    process waited for the thread to finish (some 4 s for 3,000 messages), forever for
    one that never does. It ends at `exit` now, with the thread still held."""
    data_dir = tmp_path / "data"
    async with holding(SUMMARY, ["serve"], server_env(data_dir)) as process:
        raw = RawPipe(process)
        await started(raw)
        sid, ids = await session_with(raw, 40)
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        told = await until_held(process)
        code = await shutdown_then_exit(raw)  # the thread is held still: it never finishes
    await no_traceback(told)
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert view["session"]["compactions"] == 0
    assert [m["id"] for m in view["messages"]] == ids


@pytest.mark.parametrize("end", ["input closed", "SIGTERM", "exit without shutdown"])
async def test_the_process_ends_however_it_is_ended_while_a_compactions_thread_runs(
    tmp_path: Path, end: str
) -> None:
    """The client closed the server's input, or SIGTERM came, or `exit` without
    `shutdown`, while an offline compaction ran in its worker thread: the compaction was
    cancelled as the process ended and waited for its thread to stop, forever for one
    held (only `shutdown` then `exit` ended it). It ends at once now, nothing written."""
    data_dir = tmp_path / "data"
    async with holding(SUMMARY, ["serve"], server_env(data_dir)) as process:
        raw = RawPipe(process)
        await started(raw)
        sid, ids = await session_with(raw, 40)
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        told = await until_held(process)
        assert process.stdin is not None
        if end == "input closed":
            process.stdin.close()
        elif end == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        else:
            await raw.send({"jsonrpc": "2.0", "method": "exit"})
        code = await asyncio.wait_for(process.wait(), WAIT_SECONDS)  # the thread is held
    await no_traceback(told)
    assert code == (1 if end == "exit without shutdown" else 0)

    view = await read_back(data_dir, sid)
    assert view["session"]["compactions"] == 0
    assert [m["id"] for m in view["messages"]] == ids


async def test_a_network_server_ends_when_its_client_vanishes_while_a_compaction_runs(
    tmp_path: Path,
) -> None:
    """`baton serve --tcp` whose client's connection was reset while an offline compaction
    ran in its worker thread: the server waited for the thread to stop before it ended,
    forever for one held. It ends at once now, nothing written."""
    data_dir = tmp_path / "data"
    serve = ["serve", "--tcp", "127.0.0.1:0"]
    async with holding(SUMMARY, serve, server_env(data_dir)) as process:
        assert process.stderr is not None
        token, port = "", 0
        while not port:
            line = await asyncio.wait_for(process.stderr.readline(), WAIT_SECONDS)
            assert line, "the server ended before it listened"
            token = printed.group(1).decode() if (printed := TOKEN.search(line)) else token
            port = int(found.group(3)) if (found := LISTENING.search(line)) else 0
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        raw = RawPipe(Connection(reader, writer))  # type: ignore[arg-type]
        await raw.send(initialize(1, batonToken=token))
        await raw.response(1)
        sid, ids = await session_with(raw, 40)
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        told = await until_held(process)
        writer.transport.abort()  # a reset, as when the editor is killed
        code = await asyncio.wait_for(process.wait(), WAIT_SECONDS)  # the thread is held
    await no_traceback(told)
    assert code == 0

    view = await read_back(data_dir, sid)
    assert view["session"]["compactions"] == 0
    assert [m["id"] for m in view["messages"]] == ids
