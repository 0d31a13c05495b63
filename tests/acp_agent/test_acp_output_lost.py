"""`baton acp` whose client stopped reading its output, while the client's input stays
open, ends in one line, as `baton serve` does."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from baton_testkit.acp_client import AGENT, WAIT

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
NEW = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"mcpServers": []}}


def line(message: dict[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


@pytest.mark.parametrize("gone", ["before it starts", "after initialize"])
def test_acp_whose_output_reader_is_gone_ends_with_one_line(gone: str, tmp_path: Path) -> None:
    """The agent's stdout a pipe whose reader went away: the agent went on reading its
    input and answering (creating sessions nobody would see), each answer lost with
    'pipe closed by peer or os.write(pipe, data) raised exception.' in the log, and
    ended only with its input."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        AGENT,
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )
    os.close(write_end)
    assert process.stdin is not None and process.stderr is not None
    new = {**NEW, "params": {**NEW["params"], "cwd": str(tmp_path)}}  # type: ignore[dict-item]
    try:
        with os.fdopen(read_end, "rb") as output:
            if gone == "after initialize":
                process.stdin.write(line(INITIALIZE))
                process.stdin.flush()
                assert json.loads(output.readline())["id"] == 1
        with contextlib.suppress(BrokenPipeError):  # it may have ended already
            if gone == "before it starts":
                process.stdin.write(line(INITIALIZE))
            process.stdin.write(line(new))
            process.stdin.flush()
        code = process.wait(timeout=WAIT * 3)  # a guard: it went on reading for ever
        told = process.stderr.read().decode()
    finally:
        process.kill()
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
    assert told == "baton: the connection to the client is lost; shutting down\n", told[:2000]
    assert code == 0


# `baton acp` whose close, once its input ended, is stopped (SIGTERM, as an editor or a
# service manager ends it; the output lost stops it alike) before it ends
STOPPED_AS_IT_ENDS = """
import asyncio, os, runpy, signal, sys
import baton.acp.server as server

real = server.AgentSideConnection.close

async def close(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)  # handled by the loop, at its next turns
    for _ in range(20):
        await asyncio.sleep(0)
    await real(self, *args, **kwargs)

server.AgentSideConnection.close = close
sys.argv = ["baton", "acp"]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


def test_acp_stopped_while_it_ends_ends_quietly(tmp_path: Path) -> None:
    """A stop (SIGTERM; a client whose output reader went away as its input ended, as
    `baton acp | head` saw it two runs in ten) that came while the agent closed, its input
    ended, cancelled that close: the agent ended with 1 and a traceback of CancelledError."""
    done = subprocess.run(
        [AGENT[0], "-c", STOPPED_AS_IT_ENDS],
        input=line(INITIALIZE),
        capture_output=True,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
        timeout=WAIT * 3,
    )
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1
    assert done.stderr == b"", done.stderr.decode()[-2000:]
    assert done.returncode == 0
