"""A damaged transcript that is never written to (its header lost, or naming another
session) is read once, as a healthy one is: each later look at it, while its file is as
it was, takes the session already read, not the whole file again with its warnings; a
change of the file (its header put back) is read."""

from __future__ import annotations

import logging
import random

import pytest
from test_data_dir_files import SEED, say, swapped, turns

from baton.core.conversation.store import SessionStore

WARNS = "baton.core.conversation"


def test_a_transcript_with_no_valid_header_is_read_once_while_unchanged(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    """Each `get` (every request of a client about it: a render, the meter, a hover) read
    the whole file again and logged its problems again."""
    sid = turns(store, "A", 3, random.Random(SEED + 31))
    store.close()
    path = store.path_for(sid)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(2, b"not a record\n")  # an unreadable line, told when read
    path.write_bytes(b"".join(lines[1:]))  # and the header lost
    caplog.set_level(logging.WARNING, logger=WARNS)

    first = store.get(sid)
    assert first.read_only and first.damage.header_missing
    told = [r.getMessage() for r in caplog.records]
    assert told == [f"{path.name}: skipped unreadable line 2"]
    assert all(store.get(sid) is first for _ in range(3))
    assert [r.getMessage() for r in caplog.records] == told  # not told again

    copy = path.with_suffix(".tmp")  # the header put back by a safe-save
    copy.write_bytes(b"".join(lines))
    copy.replace(path)
    healed = store.get(sid)
    assert healed is not first and not healed.read_only
    healed.append([say("written again")])
    assert store.get(sid) is healed


def test_swapped_files_are_read_once_while_unchanged(store: SessionStore) -> None:
    a, _ = swapped(store, SEED + 32)

    first = store.get(a)
    assert first.read_only and first.id_mismatch
    assert store.get(a) is first
