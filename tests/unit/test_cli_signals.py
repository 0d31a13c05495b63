"""A command the system stops (SIGTERM, SIGHUP: a shell closed, a job killed) cleans up
as an interrupt does: its temporary copy of the conversation goes, and it ends quietly
with the exit code 128 + the signal's number."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION

# `baton compact --save FILE`, whose compaction waits, once the copy of FILE is made,
# until the test stops it; it says so on stderr
WAITING = """
import asyncio, runpy, sys
import baton.cli.compact_report as report

async def waiting(*args, **kwargs):
    print("waiting", file=sys.stderr, flush=True)
    await asyncio.Event().wait()

report.compact = waiting
sys.argv = ["baton", *sys.argv[1:]]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stopped_compaction_leaves_no_copy_of_the_conversation(
    stop: signal.Signals, tmp_path: Path
) -> None:
    """SIGTERM or SIGHUP ended the process where it stood: each left a copy of the
    conversation, megabytes of it, in a baton-compact-* folder of the temporary folder."""
    scratch, data = tmp_path / "tmp", tmp_path / "data"
    scratch.mkdir()
    argv = ["compact", str(EXAMPLE_SESSION), "--save", "--data-dir", str(data)]
    process = subprocess.Popen(
        [sys.executable, "-c", WAITING, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert process.stderr is not None
    try:
        assert process.stderr.readline() == b"waiting\n"  # the copy is made
        assert [p.name[:14] for p in scratch.iterdir()] == ["baton-compact-"]
        process.send_signal(stop)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 128 + stop, err
    assert b"Traceback" not in err and out == b"", err
    assert list(scratch.iterdir()) == []
    assert not list(data.glob("sessions/*.jsonl"))
