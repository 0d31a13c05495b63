"""An append the disk refused: what it wrote is cut away again, and only that. On a disk
remounted read-only, where the write took nothing, the cut (which the disk refuses too)
was tried all the same and the server logged an error that it "could not undo a failed
append", as though a half line were left in the transcript; nothing was."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from test_transcript import HEADER, event

from baton.core.conversation.transcript import Transcript, read_events
from baton.core.errors import StorageError


def refused(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.EROFS, os.strerror(errno.EROFS))


def test_a_write_a_read_only_disk_refused_whole_is_no_append_to_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "sessions" / "s1.jsonl"
    transcript = Transcript.create(path, HEADER)
    before = path.read_bytes()
    for name in ("writev", "write", "ftruncate", "fsync"):  # remounted read-only
        monkeypatch.setattr(os, name, refused)

    with caplog.at_level(logging.ERROR), pytest.raises(StorageError) as caught:
        transcript.append(event(1))
    assert caught.value.message == f"could not write {path}: Read-only file system"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    monkeypatch.undo()
    assert path.read_bytes() == before
    transcript.append(event(2))  # remounted read-write: it goes on
    transcript.close()
    assert read_events(path)[0] == [HEADER, event(2)]
