"""The files Baton writes beside a transcript, at a session's first write: the copy of a
torn last line (`.torn`) and the unreadable lines kept aside (`.bad`). What is refused is
told as what it is, a write, naming the path."""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path

import pytest
from test_data_dir_files import SEED, say, torn, turns

from baton.core.conversation.store import SessionStore
from baton.core.errors import StorageError

WRITE_REFUSED = "Baton writes only regular files, never through a link"


def odd_file(path: Path, kind: str, outside: Path) -> str:
    """A directory or a link (to a file outside the data dir) at `path`; its kind in words."""
    if kind == "directory":
        path.mkdir()
        return "is a directory"
    outside.write_text("kept\n")
    path.symlink_to(outside)
    return "is a symbolic link"


@pytest.mark.parametrize("kind", ["directory", "link"])
def test_a_torn_copy_that_is_no_regular_file_is_refused_as_a_write(
    store: SessionStore, tmp_path: Path, kind: str
) -> None:
    """A `.torn` that was a directory or a link made the append that would cut a torn last
    line fail saying "Baton reads only regular files", though it was a write, and without
    saying what was being done: it says now that the torn line could not be kept aside,
    why, and that nothing was cut or written."""
    sid = turns(store, "torn", 1, random.Random(SEED + 71))
    store.close()
    path = store.path_for(sid)
    torn(path)
    aside = path.with_suffix(".jsonl.torn")
    what = odd_file(aside, kind, tmp_path / "outside.txt")
    before = path.read_bytes()

    with pytest.raises(StorageError) as caught:
        store.get(sid).append([say("after")])

    assert caught.value.message == (
        f"could not keep the torn last line of {path} aside: {aside} {what}; "
        f"{WRITE_REFUSED}; nothing was cut and nothing written"
    )
    assert caught.value.data["path"] == str(aside)
    assert path.read_bytes() == before
    assert kind == "directory" or (tmp_path / "outside.txt").read_text() == "kept\n"


@pytest.mark.parametrize("kind", ["directory", "link"])
def test_a_bad_copy_that_is_no_regular_file_is_logged_as_a_refused_write(
    store: SessionStore, tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A `.bad` that was a directory or a link was logged as a refused read ("Baton reads
    only regular files") when the first write would copy the unreadable lines there."""
    sid = turns(store, "bad", 1, random.Random(SEED + 72))
    store.close()
    path = store.path_for(sid)
    with path.open("ab") as handle:
        handle.write(b"garbage\n")
    aside = path.with_suffix(".jsonl.bad")
    what = odd_file(aside, kind, tmp_path / "outside.txt")

    with caplog.at_level(logging.ERROR):
        store.get(sid).append([say("after")])  # written all the same: never fatal

    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        f"{path.name}: could not keep unreadable lines aside: {aside} {what}; {WRITE_REFUSED}"
    ]
    assert kind == "directory" or (tmp_path / "outside.txt").read_text() == "kept\n"
    assert os.path.isdir(aside) == (kind == "directory")
