"""`acp-folders.json` is read as the data dir's other small files are: only as a regular
file, never through a link nor waiting on a FIFO, and never replaced when it cannot be read;
two agents on one data dir recording at once keep each other's folders."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from fifo_probe import BYTES as RECORDED
from fifo_probe import read_of_fifo

from baton.acp import folders
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


def waiting_on_a_lock() -> bool:
    """Whether this process waits for a `flock` (the kernel lists a waiter with '->')."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if fields[1:3] == ["->", "FLOCK"] and fields[5] == str(os.getpid()):
            return True
    return False


def test_two_agents_recording_at_once_keep_both_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two agents on one data dir each read the file, added their session and replaced it:
    the one that replaced it last left out the other's session, whose folder was lost."""
    first_writes, go = threading.Event(), threading.Event()
    replace = folders.replace_file

    def held_replace(path: Path, data: bytes) -> None:
        if threading.current_thread().name == "first":
            first_writes.set()
            go.wait()
        replace(path, data)

    monkeypatch.setattr(folders, "replace_file", held_replace)
    first = threading.Thread(target=Folders(tmp_path).set, args=("s_a", "/a"), name="first")
    first.start()
    first_writes.wait()  # it read the file and is about to replace it
    second = threading.Thread(target=Folders(tmp_path).set, args=("s_b", "/b"))
    second.start()
    while second.is_alive() and not waiting_on_a_lock():
        time.sleep(0.001)  # until it has recorded, or waits for the first
    go.set()
    first.join()
    second.join()
    assert Folders(tmp_path).read() == {"s_a": "/a", "s_b": "/b"}


def test_a_file_nested_too_deep_is_not_read_nor_replaced(tmp_path: Path) -> None:
    """A file of brackets nested past the JSON parser's depth failed the read with a
    RecursionError (an ACP session/new or load answered an internal error)."""
    (tmp_path / FILE_NAME).write_bytes(b"[" * 4_000)
    assert Folders(tmp_path).read() == {}
    Folders(tmp_path).set("s_new", "/work")
    assert (tmp_path / FILE_NAME).read_bytes() == b"[" * 4_000
