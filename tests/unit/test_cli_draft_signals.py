"""Ctrl-C during `baton compact SESSION --preview`: the draft is not saved, or, when it
was already, the command says which one it is."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_compaction_drafts import conversation

from baton.core.service.service import BatonService
from baton.core.settings import Settings

# `baton compact SESSION --preview`, whose draft, at `HOOK` of the preview module (its
# measure, a stretch with no await; or once the record is written), waits for a line on
# stdin, saying on stderr that it waits; the test interrupts it there, then sends the line
WAITING = """
import runpy, sys
import baton.core.compaction.preview as preview

hook, when = sys.argv[1], sys.argv[2]
real = getattr(preview, hook)

def waiting(*args, **kwargs):
    done = real(*args, **kwargs) if when == "after" else None
    print("waiting", file=sys.stderr, flush=True)
    sys.stdin.readline()
    return done if when == "after" else real(*args, **kwargs)

setattr(preview, hook, waiting)
sys.argv = ["baton", *sys.argv[3:]]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, str]:
    data = tmp_path / "data"
    service = BatonService(Settings(data_dir=str(data)))
    sid = conversation(service, turns=20)
    service._runtimes.close_store()
    return data, sid


def interrupted(data: Path, sid: str, hook: str, when: str) -> tuple[int, bytes, bytes]:
    """The preview's exit code, stdout and stderr, interrupted at `hook`."""
    argv = ["compact", sid, "--preview", "--data-dir", str(data)]
    process = subprocess.Popen(
        [sys.executable, "-c", WAITING, hook, when, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        while (line := process.stderr.readline()) != b"waiting\n":
            assert line, "the preview ended before it got there"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(b"\n", timeout=60)
    finally:
        process.kill()
        process.wait()
    return process.returncode, out, err


def test_ctrl_c_while_the_draft_is_measured_saves_nothing(saved: tuple[Path, str]) -> None:
    """The preview's measure and the write of its record have no await: Ctrl-C there only
    asked it to stop at its next one, so the draft was saved and its report printed, and
    the command then ended with 130 as if it had been stopped before."""
    data, sid = saved
    code, out, err = interrupted(data, sid, "commit_summary", "before")
    assert code == 130, err
    assert b"Traceback" not in err and out == b"", err
    assert not (data / "sessions" / f"{sid}.draft.json").exists()
    assert not [p for p in (data / "sessions").iterdir() if p.name.endswith(".tmp")]


def test_ctrl_c_once_the_draft_is_saved_says_which_draft_it_is(
    saved: tuple[Path, str],
) -> None:
    data, sid = saved
    code, out, err = interrupted(data, sid, "save_record", "after")
    record = data / "sessions" / f"{sid}.draft.json"
    assert code == 130, err
    assert b"Traceback" not in err and out == b"", err
    assert record.exists()
    draft_id = record.read_text().split('"draftId": "')[1].split('"')[0]
    said = err.decode().strip().splitlines()[-1]
    assert said == (
        f"baton: interrupted once the draft {draft_id} of session {sid} was saved: apply it "
        f"with `baton compact {sid} --apply-draft {draft_id}`, or drop it with "
        f"--discard-draft {draft_id}"
    )
