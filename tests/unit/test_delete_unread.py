"""A session nobody holds is deleted, and found deleted, without being read: a delete
replayed its whole transcript first (seconds, on the server's loop, for a session of
100,000 messages), and so did each `get` of a deleted session that nothing held. Its
header and its last line are enough; checked by counting the passes over its file."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_data_dir_files import SEED, torn, turns

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
