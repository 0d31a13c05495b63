"""Folders the walk cannot enter (no permission to read them): a search cannot look inside
them, so find_files and search_text say how many they could not read rather than answer
as if the workspace held nothing more."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from tool_calls import call, ctx

from baton.core.tools import file_reads

NOTE = "[{} folders could not be read (Permission denied): what they hold was not searched]"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`secret/` and `more/` refuse to be listed, as folders of another user's do (root
    may read any folder, so the refusal is made here)."""
    folder = tmp_path / "ws"
    for name in ("open", "secret", "more"):
        (folder / name).mkdir(parents=True)
        (folder / name / "x.txt").write_text("match\n")
    real_scandir = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path).name in ("secret", "more"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return folder


@pytest.mark.parametrize(
    ("name", "input", "found"),
    [
        ("find_files", {"pattern": "**/x.txt"}, "open/x.txt"),
        ("search_text", {"pattern": "match"}, "open/x.txt:1: match"),
    ],
)
async def test_folders_the_walk_cannot_read_are_counted_in_the_result(
    root: Path, name: str, input: dict[str, str], found: str
) -> None:
    """They were skipped without a word: the result listed `open/x.txt` alone."""
    result = await call(ctx(root), name, **input)
    assert result.text.splitlines() == [found, NOTE.format(2)], result.text


@pytest.mark.parametrize(
    ("name", "input", "nothing"),
    [
        ("find_files", {"pattern": "**/*.md"}, "No files match **/*.md."),
        ("search_text", {"pattern": "absent"}, "No hits for 'absent'."),
    ],
)
async def test_nothing_found_says_what_could_not_be_read(
    root: Path, name: str, input: dict[str, str], nothing: str
) -> None:
    result = await call(ctx(root), name, **input)
    assert result.text.splitlines() == [nothing, NOTE.format(2)], result.text


async def test_a_search_of_one_unreadable_folder_says_it(root: Path) -> None:
    result = await call(ctx(root), "search_text", pattern="match", path="secret")
    assert result.text.splitlines() == [
        "No hits for 'match'.",
        "[1 folder could not be read (Permission denied): what it holds was not searched]",
    ], result.text


async def test_files_search_text_cannot_read_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the server may not read was skipped as a binary one is: 'No hits' for a text
    it holds, without a word."""
    (tmp_path / "locked.txt").write_text("match\n")
    (tmp_path / "open.txt").write_text("other\n")
    real_open = file_reads.open_read

    def open_read(path: Path) -> BinaryIO:
        if path.name == "locked.txt":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path)

    monkeypatch.setattr(file_reads, "open_read", open_read)
    result = await call(ctx(tmp_path), "search_text", pattern="match")
    assert result.text.splitlines() == [
        "No hits for 'match'.",
        "[1 file could not be read (Permission denied): it was not searched]",
    ], result.text
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"match\x00\x01")  # not text: skipped as ever, not counted
    again = await call(ctx(tmp_path), "search_text", pattern="match")
    assert again.text.splitlines()[1:] == [
        "[1 file could not be read (Permission denied): it was not searched]"
    ], again.text
