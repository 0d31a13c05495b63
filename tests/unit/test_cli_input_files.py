"""Files the command line reads besides sessions (`baton acp --settings FILE`, `baton
compact --summary-file F`): one that cannot be read is one line on stderr, exit code 2,
before any work (a FIFO is never waited on)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def acp_with(settings: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baton", "acp", "--settings", str(settings)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,  # a guard: a FIFO was waited on for ever
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )


@pytest.mark.parametrize(
    ("name", "told"),
    [
        ("missing.json", "no such file"),
        ("folder", "a directory, not a settings file"),
        ("fifo", "a FIFO, not a settings file"),
        ("latin1.json", "not UTF-8 text"),
        ("broken.json", "not JSON: Expecting ',' delimiter (line 1, column 15)"),
        ("deep.json", "not JSON: nested too deep"),
        ("list.json", "the file must hold a JSON object"),
    ],
)
def test_a_settings_file_that_cannot_be_read_is_named_in_one_line(
    name: str, told: str, tmp_path: Path
) -> None:
    """A FIFO left the agent waiting for ever; the others said it in Python's words
    ("[Errno 2] No such file or directory: '...'", "'utf-8' codec can't decode byte ...")."""
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "latin1.json").write_bytes('{"model": "caf\u00e9"}'.encode("latin-1"))
    (tmp_path / "broken.json").write_text('{"model": "a" "b"}')
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "list.json").write_text("[]")
    done = acp_with(tmp_path / name, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"baton: --settings {tmp_path / name}: {told}\n"
    assert done.stdout == "" and not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("name", "told"),
    [
        ("missing.md", "no such file"),
        ("folder", "a directory, not a summary file"),
        ("fifo", "a FIFO, not a summary file"),
        ("latin1.json", "not UTF-8 text"),
    ],
)
def test_a_summary_file_that_cannot_be_read_is_named_in_one_line(
    name: str, told: str, tmp_path: Path
) -> None:
    """`compact --apply-draft ID --summary-file F`: a FIFO was waited on for ever, the
    others told in Python's words, as --settings was."""
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "latin1.json").write_bytes("caf\u00e9".encode("latin-1"))
    draft = ["compact", "s_1", "--apply-draft", "d_1", "--data-dir", str(tmp_path / "data")]
    done = subprocess.run(
        [sys.executable, "-m", "baton", *draft, "--summary-file", str(tmp_path / name)],
        capture_output=True,
        text=True,
        timeout=60,  # a guard: a FIFO was waited on for ever
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"baton: cannot read the summary file {tmp_path / name}: {told}\n"
    assert done.stdout == "" and not (tmp_path / "data").exists()
