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
