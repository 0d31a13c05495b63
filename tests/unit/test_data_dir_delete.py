"""A delete writes only where a change may: a transcript whose header names another
session (files swapped or copied by hand) or that has no valid header is damaged and
never written to, so a delete of it is refused, as every other change is. A deleted
session is not held open."""

from __future__ import annotations

import gc
import random
import weakref
from pathlib import Path

import pytest
from test_data_dir_files import SEED, swapped, turns
from test_data_dir_sessions import descriptors

from baton.core.conversation.store import SessionStore
from baton.core.errors import SessionLocked, SessionNotFound


def test_a_delete_of_a_swapped_file_is_refused_and_hides_no_other_session(
    store: SessionStore,
) -> None:
    """It appended its `deleted` record to the file of the session the header names, so
    that once the files were named right again, that other session was gone."""
    a, b = swapped(store, SEED + 21)
    pa, pb = store.path_for(a), store.path_for(b)
    held = pa.read_bytes()  # B's transcript under A's name

    with pytest.raises(SessionLocked):
        store.delete(a)
    assert pa.read_bytes() == held
    store.close()
    pa.rename(pa.with_suffix(".tmp"))  # named right again
    pb.rename(pa)
    pa.with_suffix(".tmp").rename(pb)
    assert {s.session_id for s in store.list()} == {a, b}


def test_a_delete_of_a_file_with_no_valid_header_is_refused(store: SessionStore) -> None:
    sid = turns(store, "A", 1, random.Random(SEED + 22))
    store.close()
    path = store.path_for(sid)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[1:]))  # the header lost
    held = path.read_bytes()

    with pytest.raises(SessionLocked):
        store.delete(sid)
    assert path.read_bytes() == held
    assert [s.session_id for s in store.list()] == [sid]


def test_deleted_sessions_are_not_held_open(tmp_path: Path) -> None:
    """Each deleted session stayed open, its descriptor, its lock and all its messages
    held until 64 others pushed it out: deleting many large sessions held them all, as did
    a `get` of a session found deleted, which read it whole and kept it."""
    store = SessionStore(tmp_path, lambda m: 1)
    rng = random.Random(SEED + 23)
    ids = [turns(store, f"S{n}", 3, rng) for n in range(8)]
    store.close()
    fds = descriptors()
    kept = {sid: weakref.ref(store.get(sid)) for sid in ids[:4]}  # open here, then deleted
    for sid in ids:
        store.delete(sid)
    for sid in ids:
        with pytest.raises(SessionNotFound):
            store.get(sid)
    gc.collect()
    assert descriptors() == fds
    assert [sid for sid, ref in kept.items() if ref() is not None] == []
    assert store.list() == []
    store.close()
