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
from test_cli_draft_signals import WAITING_AT, stopped_waiting

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


# the same, whose compaction's commit (a stretch with no await: its checks, then the commit
# of the copy) waits until the test interrupts it
COMMITTING = """
import runpy, sys, threading
import baton.core.compaction.engine as engine

def committing(*args, **kwargs):
    print("committing", file=sys.stderr, flush=True)
    threading.Event().wait()

engine.commit_summary = committing
sys.argv = ["baton", *sys.argv[1:]]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_the_copy_is_committed_stops_the_command(tmp_path: Path) -> None:
    """Ctrl-C once the summary was written only asked the compaction to stop at its next
    wait, and its checks and commit have none: the compaction of the copy committed, the
    interrupt came too late to count, and the command saved the copy, printed its report
    and ended with 0, as if the user had not pressed it (seen on a 240 MB session: pressed
    at "Checking what the summary kept", saved 25 s later)."""
    scratch, data = tmp_path / "tmp", tmp_path / "data"
    scratch.mkdir()
    argv = ["compact", str(EXAMPLE_SESSION), "--save", "--data-dir", str(data)]
    process = subprocess.Popen(
        [sys.executable, "-c", COMMITTING, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert process.stderr is not None
    try:
        while (line := process.stderr.readline()) != b"committing\n":
            assert line, "the command ended before its commit"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130, err
    assert b"Traceback" not in err and out == b"", err
    assert list(scratch.iterdir()) == []
    assert not list(data.glob("sessions/*.jsonl"))


@pytest.mark.parametrize(
    "hook",
    [
        # the copy is written into the data dir, and read as its session
        "baton.core.conversation.store:SessionStore.get",
        # the copy is saved: the report that names it is made
        "baton.cli.compact_report:format_report",
    ],
)
def test_ctrl_c_once_the_copy_is_written_saves_nothing(tmp_path: Path, hook: str) -> None:
    """Interrupted once the compacted copy was written into the data dir, before the report
    that names it, the command ended with 130 and said nothing, and the copy stayed there
    as a session: saved where Ctrl-C is to save nothing."""
    data = tmp_path / "data"
    module, _, name = hook.rpartition(":")
    argv = ["compact", str(EXAMPLE_SESSION), "--save", "--data-dir", str(data)]
    program = [WAITING_AT, module, name, "before", *argv]
    code, out, err = stopped_waiting(program, signal.SIGINT, "the command")
    assert code == 130, err
    assert b"Traceback" not in err and out == b"", err
    assert not list(data.glob("sessions/*.jsonl"))
