"""`acp-folders.json` is read as the data dir's other small files are: only as a regular
file, never through a link nor waiting on a FIFO, and never replaced when it cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

from fifo_probe import BYTES as RECORDED
from fifo_probe import read_of_fifo

from baton.acp.folders import FILE_NAME, Folders


def test_a_fifo_in_its_place_is_neither_waited_on_nor_read_nor_replaced(tmp_path: Path) -> None:
    """Such a FIFO was opened and read to its end: `baton acp`'s session/list and
    session/new waited on it for as long as its writer stayed, the whole agent with them."""
    path = tmp_path / FILE_NAME
    taken, answers = read_of_fifo(path, Folders(tmp_path).read)
    assert not taken, "the FIFO was read"
    assert answers == [{}]
    Folders(tmp_path).set("s_new", "/work")
    assert path.is_fifo()  # left as it is


def test_a_link_in_its_place_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(RECORDED)
    data = tmp_path / "data"
    data.mkdir()
    (data / FILE_NAME).symlink_to(outside)
    assert Folders(data).read() == {}
    Folders(data).set("s_new", "/work")
    assert outside.read_bytes() == RECORDED


def test_a_file_that_cannot_be_read_is_not_replaced_by_one_without_its_folders(
    tmp_path: Path,
) -> None:
    """A file cut short (a sync tool's copy, a full disk) was replaced by one holding the
    new session's folder alone."""
    path = tmp_path / FILE_NAME
    path.write_bytes(RECORDED[:-1])
    Folders(tmp_path).set("s_new", "/work")
    assert path.read_bytes() == RECORDED[:-1]


def test_folders_are_kept_and_added_to(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(RECORDED)
    Folders(tmp_path).set("s_new", "/work")
    assert Folders(tmp_path).read() == {"s_other": "/elsewhere", "s_new": "/work"}
    assert json.loads((tmp_path / FILE_NAME).read_text()) == Folders(tmp_path).read()
