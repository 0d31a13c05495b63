"""Ctrl-C during `baton compact SESSION --preview`: the draft is not saved, or, when it
was already, the command says which one it is."""

from __future__ import annotations

import json
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


def stopped_waiting(
    program: list[str], stop: signal.Signals, what: str
) -> tuple[int, bytes, bytes]:
    """The exit code, stdout and stderr of `python -c PROGRAM...` (WAITING or WAITING_AT and
    their arguments), stopped by `stop` once it says it waits, then sent the line it waits
    for; `what` names the command in the failure if it ends before it gets there."""
    process = subprocess.Popen(
        [sys.executable, "-c", *program],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        while (line := process.stderr.readline()) != b"waiting\n":
            assert line, f"{what} ended before it got there"
        process.send_signal(stop)
        out, err = process.communicate(b"\n", timeout=60)
    finally:
        process.kill()
        process.wait()
    return process.returncode, out, err


def interrupted(data: Path, sid: str, hook: str, when: str) -> tuple[int, bytes, bytes]:
    """The preview's exit code, stdout and stderr, interrupted at `hook`."""
    argv = ["compact", sid, "--preview", "--data-dir", str(data)]
    return stopped_waiting([WAITING, hook, when, *argv], signal.SIGINT, "the preview")


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


# `baton compact SESSION --apply-draft ID`, waiting at `HOOK` of `MODULE` (a function, or a
# method as Class.name), before or after it runs, as WAITING waits
WAITING_AT = """
import importlib, runpy, sys

module, hook, when = sys.argv[1:4]
owner = importlib.import_module(module)
if "." in hook:
    name, hook = hook.split(".")
    owner = getattr(owner, name)
real = getattr(owner, hook)

def waiting(*args, **kwargs):
    done = real(*args, **kwargs) if when == "after" else None
    print("waiting", file=sys.stderr, flush=True)
    sys.stdin.readline()
    return done if when == "after" else real(*args, **kwargs)

setattr(owner, hook, waiting)
sys.argv = ["baton", *sys.argv[4:]]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


def previewed(data: Path, sid: str) -> str:
    """The id of the draft a preview of the session saved."""
    argv = ["compact", sid, "--preview", "--data-dir", str(data)]
    done = subprocess.run([sys.executable, "-m", "baton", *argv], capture_output=True, check=True)
    return done.stdout.decode().split("--apply-draft ")[1].split("`")[0]


def applied(data: Path, sid: str, draft: str, hook: str, when: str) -> tuple[int, bytes, bytes]:
    """The apply's exit code, stdout and stderr, interrupted (Ctrl-C) at `hook`."""
    module, _, name = hook.rpartition(":")
    argv = ["compact", sid, "--apply-draft", draft, "--data-dir", str(data)]
    return stopped_waiting([WAITING_AT, module, name, when, *argv], signal.SIGINT, "the apply")


def test_ctrl_c_before_a_draft_is_committed_applies_nothing(saved: tuple[Path, str]) -> None:
    """The apply's check of the draft against the session and its commit have no await:
    Ctrl-C while the draft was read for its commit only asked the command to stop at its
    next await, after the commit, where it was dropped: the session was compacted and the
    command ended with 0, as if the key had not been pressed."""
    data, sid = saved
    draft = previewed(data, sid)
    transcript = data / "sessions" / f"{sid}.jsonl"
    before = transcript.read_bytes()
    hook = "baton.core.compaction.preview:prepared_from_record"
    code, out, err = applied(data, sid, draft, hook, "before")
    assert code == 130, err
    assert b"Traceback" not in err and out == b"", err
    assert transcript.read_bytes() == before
    assert (data / "sessions" / f"{sid}.draft.json").exists()  # to apply or drop later
    assert err.decode().strip().splitlines()[-1] == (
        f"baton: interrupted before the draft {draft} of session {sid} was applied: nothing "
        f"changed; apply it with `baton compact {sid} --apply-draft {draft}`, or drop it with "
        f"--discard-draft {draft}"
    )


def test_ctrl_c_once_a_draft_is_committed_says_the_session_is_compacted(
    saved: tuple[Path, str],
) -> None:
    """Interrupted once the compaction's line was written, the command ended with no word
    of it (with 130 at a second Ctrl-C, or with 0 and its report once the interrupt was
    dropped): the session compacted, and its stale draft record left behind."""
    data, sid = saved
    draft = previewed(data, sid)
    hook = "baton.core.conversation.session:Session.commit_boundary"
    code, out, err = applied(data, sid, draft, hook, "after")
    assert code == 130, err
    assert b"Traceback" not in err and out == b"", err
    events = [json.loads(line) for line in (data / "sessions" / f"{sid}.jsonl").open()]
    (boundary,) = [e["boundary"]["id"] for e in events if e.get("type") == "boundary"]
    assert not (data / "sessions" / f"{sid}.draft.json").exists()
    assert err.decode().strip().splitlines()[-1] == (
        f"baton: interrupted once the draft {draft} of session {sid} was applied: the session "
        f"is compacted (boundary {boundary})"
    )
