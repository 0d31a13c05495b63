"""A delete writes only where a change may: a transcript whose header names another
session (files swapped or copied by hand) or that has no valid header is damaged and
never written to, so a delete of it is refused, as every other change is."""

from __future__ import annotations

import random

import pytest
from test_data_dir_files import SEED, turns

from baton.core.conversation.store import SessionStore
from baton.core.errors import SessionLocked


def test_a_delete_of_a_swapped_file_is_refused_and_hides_no_other_session(
    store: SessionStore,
) -> None:
    """It appended its `deleted` record to the file of the session the header names, so
    that once the files were named right again, that other session was gone."""
    rng = random.Random(SEED + 21)
    a, b = turns(store, "A", 1, rng), turns(store, "B", 2, rng)
    store.close()
    pa, pb = store.path_for(a), store.path_for(b)
    pa.rename(pa.with_suffix(".tmp"))
    pb.rename(pa)
    pa.with_suffix(".tmp").rename(pb)
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
