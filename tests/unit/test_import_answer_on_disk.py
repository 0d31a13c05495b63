"""An import answers the session its file holds: another program that deleted, emptied
or replaced the new transcript between the import's write and its answer (a sync tool, a
cleaner) is told, never answered as "imported"."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_cli_draft_signals import WAITING_AT

from baton.cli.main import EXAMPLE_SESSION
from baton.core.errors import TranscriptChanged
from baton.core.importers import claude_code_write
from baton.core.service.service import BatonService
from baton.core.settings import Settings


def deleted(path: Path) -> None:
    path.unlink()


def emptied(path: Path) -> None:
    with open(path, "r+b") as file:
        file.truncate(0)


def cut_short(path: Path) -> None:
    with open(path, "r+b") as file:
        file.truncate(path.stat().st_size // 2)


def copied(path: Path) -> None:
    """A safe-save's or a sync tool's: the same bytes, a new file in its place."""
    staged = path.with_name("copy.tmp")
    shutil.copyfile(path, staged)
    staged.rename(path)


def meanwhile(monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]) -> None:
    """`change` made to the new transcript once the import put it in place."""
    finish = claude_code_write.StagedTranscript.finish

    def finished(staged: Any, *args: Any) -> None:
        finish(staged, *args)
        change(staged.target)

    monkeypatch.setattr(claude_code_write.StagedTranscript, "finish", finished)


@pytest.fixture
def service(tmp_path: Path) -> BatonService:
    return BatonService(Settings(data_dir=str(tmp_path / "data")))


def sessions(service: BatonService) -> list[str]:
    folder = service.store.sessions_dir
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".jsonl")


@pytest.mark.parametrize(
    ("change", "became"),
    [(deleted, "was deleted"), (emptied, "was changed"), (cut_short, "was changed")],
)
def test_an_import_whose_file_another_program_took_away_says_so(
    service: BatonService,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[Path], None],
    became: str,
) -> None:
    """The import answered "imported" with its session's figures while the file was gone,
    or emptied: the session it named was not there (the next get: session_not_found), or
    was an empty, damaged one. It now answers `transcript_changed`, naming the file and
    what became of it; what the other program left is left as it is."""
    meanwhile(monkeypatch, change)

    with pytest.raises(TranscriptChanged) as raised:
        asyncio.run(service.import_file(str(EXAMPLE_SESSION)))

    message = raised.value.message
    assert f"{became} by another program before the import answered" in message, message
    assert "import the file again" in message
    assert len(sessions(service)) == (0 if change is deleted else 1)
    assert service.store.open_ids() == []  # nothing held of it


def test_an_import_whose_file_another_program_copied_over_answers_the_copy(
    service: BatonService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy of the file saved in its place holds the session as imported: the import
    answers it, read from that file, and the session's next write lands there."""
    meanwhile(monkeypatch, copied)

    imported = asyncio.run(service.import_file(str(EXAMPLE_SESSION))).session

    sid = imported.session_id
    assert sessions(service) == [f"{sid}.jsonl"]
    assert len(imported.view) == 58 and not imported.read_only
    service.rename(sid, "Renamed after the copy")
    assert "Renamed after the copy" in (service.store.sessions_dir / f"{sid}.jsonl").read_text()
    asyncio.run(service.close())


def held_import(data: Path) -> subprocess.Popen[bytes]:
    """`baton import` held once its new transcript is in place under its session's name."""
    argv = ["import", str(EXAMPLE_SESSION), "--data-dir", str(data)]
    hook = ["baton.core.importers.claude_code_write", "StagedTranscript.finish", "after"]
    process = subprocess.Popen(
        [sys.executable, "-c", WAITING_AT, *hook, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    while (line := process.stderr.readline()) != b"waiting\n":
        assert line, "the import ended before it got there"
    return process


@pytest.mark.parametrize("change", [deleted, emptied, copied])
def test_baton_import_says_what_became_of_its_file(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    """`baton import` printed "Imported ... as session s_..." with its figures and the
    transcript's path, and ended with 0, for a file deleted or emptied meanwhile."""
    data = tmp_path / "data"
    process = held_import(data)
    try:
        (path,) = (data / "sessions").glob("s_*.jsonl")
        change(path)
        out, err = process.communicate(b"\n", timeout=60)
    finally:
        process.kill()
        process.wait()
    if change is copied:
        assert process.returncode == 0, err
        assert out.startswith(f"Imported {EXAMPLE_SESSION} as session {path.stem} ".encode())
        return
    assert process.returncode == 2 and out == b"", err
    assert b"Traceback" not in err
    assert f"{path} was ".encode() in err and b"before the import answered" in err, err
