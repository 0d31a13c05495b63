"""Two `baton import`s of one file at once into one data dir: the second waits for the first
and says it was imported, as it would a minute later."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_cli_draft_signals import WAITING_AT

from baton.cli.main import EXAMPLE_SESSION

HELD = ["baton.core.importers.claude_code_write", "StagedTranscript.finish", "before"]


def held_import(data: Path, source: Path) -> subprocess.Popen[bytes]:
    """`baton import` of `source` held before its new session is renamed into place."""
    argv = ["import", str(source), "--data-dir", str(data)]
    held = subprocess.Popen(
        [sys.executable, "-c", WAITING_AT, *HELD, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert held.stderr is not None
    while (line := held.stderr.readline()) != b"waiting\n":
        assert line, "the import ended before it got there"
    return held


def test_a_second_import_of_a_file_being_imported_waits_and_says_so(tmp_path: Path) -> None:
    """Both imports answered "Imported ... as session s_..." and the data dir held two
    sessions of the file: the second looked for earlier imports before the first's session
    was in place, so `baton import` without --again made another copy without a word."""
    data = tmp_path / "data"
    first = held_import(data, EXAMPLE_SESSION)
    second = None
    try:
        argv = ["import", str(EXAMPLE_SESSION), "--data-dir", str(data)]
        second = subprocess.Popen(
            [sys.executable, "-m", "baton", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert second.stderr is not None
        waiting = second.stderr.readline().decode()  # or its end, when it does not wait
        out, err = first.communicate(b"\n", timeout=60)
        assert first.returncode == 0, err
        made = out.decode().splitlines()[0]
        assert made.startswith(f"Imported {EXAMPLE_SESSION} as session s_"), made
        sid = made.split(" as session ")[1].split()[0]
        out2, err2 = second.communicate(timeout=60)
    finally:
        for process in (first, second):
            if process is not None:
                process.kill()
                process.wait()
    assert second.returncode == 0, err2
    assert out2.decode().splitlines()[0] == (
        f"Already imported {EXAMPLE_SESSION} as session {sid} "
        "('Fix expense report crash on March bank export'); nothing changed"
    )
    sessions = data / "sessions"
    assert [p.name for p in sessions.iterdir() if not p.name.startswith(".")] == [f"{sid}.jsonl"]
    assert not list(sessions.glob(".*.importing")) and not list(sessions.glob(".import-*"))
    assert waiting == f"Waiting for another import of {EXAMPLE_SESSION} into {data} to end\n"
