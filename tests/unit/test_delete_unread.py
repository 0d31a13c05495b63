"""A session nobody holds is deleted, and found deleted, without being read: a delete
replayed its whole transcript first (seconds, on the server's loop, for a session of
100,000 messages), and so did each `get` of a deleted session that nothing held. Its
header and its last line are enough; checked by counting the passes over its file."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_data_dir_files import SEED, torn, turns

from baton.core.conversation import transcript_ends
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript_read import LinePass
from baton.core.errors import SessionNotFound


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files read whole since the test began, one entry a pass."""
    read: list[Path] = []
    original = LinePass.__iter__

    def counted(self: LinePass) -> Iterator[dict[str, object]]:
        read.append(self.path)
        return original(self)

    monkeypatch.setattr(LinePass, "__iter__", counted)
    return read


def test_a_session_nobody_holds_is_deleted_and_found_deleted_unread(
    store: SessionStore, passes: list[Path]
) -> None:
    rng = random.Random(SEED + 31)
    sid, other = turns(store, "A", 40, rng), turns(store, "B", 2, rng)
    store.close()
    passes.clear()

    store.delete(sid)
    for _ in range(3):
        with pytest.raises(SessionNotFound, match="was deleted"):
            store.get(sid)
    with pytest.raises(SessionNotFound, match="was deleted"):
        store.delete(sid)
    assert passes == []
    assert [s.session_id for s in store.list()] == [other]
    # the record was appended as a delete of a read session appends it
    fresh = SessionStore(store.data_dir, store.count)
    session = fresh.load(sid)
    assert session.deleted and not session.damage.any and not session.load_problems
    assert session.transcript.path.read_bytes().splitlines()[-1].startswith(b'{"type":"deleted"')
    session.transcript.close()
    fresh.close()


def test_a_session_with_a_torn_last_line_is_read_to_be_deleted(
    store: SessionStore, passes: list[Path]
) -> None:
    """Its torn line is cut before the delete lands, as before: it is read for that."""
    sid = turns(store, "A", 2, random.Random(SEED + 32))
    store.close()
    path = store.path_for(sid)
    torn(path)
    passes.clear()

    store.delete(sid)
    assert passes == [path]
    with pytest.raises(SessionNotFound, match="was deleted"):
        store.get(sid)
    assert path.read_bytes().splitlines()[-1].startswith(b'{"type":"deleted"')


def test_a_file_swapped_in_after_its_header_was_read_gets_no_delete(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header was read through one open of the file, the delete appended through a
    second: a file another program saved in its place between the two (write a copy,
    rename it over) took the delete, its own header never checked. Here the copy put in
    its place is another session's transcript, swapped in as the first open is made."""
    rng = random.Random(SEED + 33)
    sid, other = turns(store, "A", 2, rng), turns(store, "B", 2, rng)
    store.close()
    path, saved = store.path_for(sid), store.path_for(other).read_bytes()
    real_open = os.open
    opened: list[str] = []

    def open_then_swap(name: Any, *args: Any, **kwargs: Any) -> int:
        fd = real_open(name, *args, **kwargs)
        if not isinstance(name, int) and os.fspath(name) == os.fspath(path) and not opened:
            opened.append("swapped")
            path.with_name("saving.tmp").write_bytes(saved)
            os.replace(path.with_name("saving.tmp"), path)
        return fd

    monkeypatch.setattr(os, "open", open_then_swap)
    written = transcript_ends.delete_unread(path, sid, {"type": "deleted", "at": "now"})
    assert opened == ["swapped"]
    assert path.read_bytes() == saved, "the delete went into a file whose header was not read"
    assert not written  # the caller reads the file at the name as it is now
