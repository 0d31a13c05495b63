"""`exit` while an offline compaction's worker thread still runs: the process ends then,
the compaction cancelled before it committed, and the transcript reads back whole."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lsp_harness import WAIT_SECONDS, conversation, server_env
from test_server_lifecycle import INITIALIZED, SHUTDOWN, exit_code, initialize, read_back, request
from test_server_malformed import RawPipe

from baton import protocol

HELD = "held by the test"  # said on stderr once the compaction's thread is held

# `python -m baton serve` whose offline compaction holds its worker thread, never to let
# it go: the summary is never written, and nothing the thread's loop is told reaches it
HOLDING = f"""
import runpy, sys, threading
from baton.core.compaction import engine

async def summarize(*args, **kwargs):
    print({HELD!r}, file=sys.stderr, flush=True)
    threading.Event().wait()

engine.summarize = summarize
sys.argv = ["baton", "serve"]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


async def holding_server(data_dir: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *[sys.executable, "-c", HOLDING],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(data_dir),
    )


async def until_held(process: asyncio.subprocess.Process) -> None:
    assert process.stderr is not None
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), WAIT_SECONDS)
        assert line, "the server ended before its compaction was held"
        if line.decode().strip() == HELD:
            return


async def test_exit_ends_the_process_while_an_offline_compactions_thread_still_runs(
    tmp_path: Path,
) -> None:
    """`shutdown` then `exit` while an offline compaction ran in its worker thread: the
    process waited for the thread to finish (some 4 s for 3,000 messages), forever for
    one that never does. It ends at `exit` now, with the thread still held."""
    data_dir = tmp_path / "data"
    process = await holding_server(data_dir)
    raw = RawPipe(process)
    try:
        await raw.send(initialize(1))
        await raw.response(1)
        await raw.send(INITIALIZED)
        await raw.send(request(2, protocol.SESSION_CREATE, {}))
        sid = (await raw.response(2))["result"]["sessionId"]
        append = {"sessionId": sid, "messages": conversation(40)}
        await raw.send(request(3, protocol.SESSION_APPEND, append))
        ids = (await raw.response(3))["result"]["messageIds"]
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        await until_held(process)
        told = asyncio.ensure_future(process.stderr.read())  # type: ignore[union-attr]
        await raw.send(SHUTDOWN)
        await raw.response(2)
        code = await exit_code(raw)  # the thread is held still: it never finishes
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    stderr = (await told).decode()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert view["session"]["compactions"] == 0
    assert [m["id"] for m in view["messages"]] == ids
