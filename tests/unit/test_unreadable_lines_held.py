"""An unreadable line of a transcript (garbage another program wrote, or a record that
fails validation) is copied aside byte for byte, but not held in memory while the session
is open: a line may be hundreds of MB, and a session stays open as long as it is in use."""

from __future__ import annotations

import json
import random
import tracemalloc
from collections.abc import Iterator

import pytest
from test_data_dir_files import SEED, say, turns

from baton.core.conversation.store import SessionStore

LINE = 16 << 20  # bytes


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def held_since(before: int) -> int:
    """The bytes Python allocated since `before` that are still alive."""
    return tracemalloc.get_traced_memory()[0] - before


@pytest.mark.usefixtures("traced")
def test_a_huge_unreadable_line_is_kept_aside_not_held(store: SessionStore) -> None:
    """Each unreadable line was held, whole, for as long as its session stayed open (in the
    load's report, and in the session a record that failed validation), in a read-only view
    too, which never writes them aside: two 16 MB lines in each of two sessions left 64 MB
    held. A line is read again from the file when it is copied aside; only a record that
    failed validation (no longer a line of the file as such) waits, until the first write."""
    rng = random.Random(SEED + 61)
    sid = turns(store, "garbage", 2, rng)
    other = turns(store, "read elsewhere", 1, rng)
    store.close()
    garbage = bytes(rng.choice(b"abcdef{[") for _ in range(256)) * (LINE // 256)
    invalid = json.dumps({"type": "message", "message": {"role": 7, "id": "x" * LINE}}).encode()
    for name in (sid, other):
        with store.path_for(name).open("ab") as handle:
            handle.write(garbage + b"\n" + invalid + b"\n")
    elsewhere = SessionStore(store.data_dir, store.count)
    assert not elsewhere.get(other).read_only  # the writer: here, it is read-only

    before = tracemalloc.get_traced_memory()[0]
    session, view = store.get(sid), store.get(other)
    assert session.damage.lines == 2 and view.read_only and view.damage.lines == 2
    assert held_since(before) < LINE + LINE // 4  # the record to keep aside at the write

    session.append([say("written after them")])
    assert held_since(before) < LINE // 4
    kept, record = store.path_for(sid).with_suffix(".jsonl.bad").read_bytes().split(b"\n")[:2]
    assert kept == garbage and json.loads(record) == json.loads(invalid)
    elsewhere.close()


@pytest.mark.usefixtures("traced")
def test_a_huge_torn_last_line_is_cut_aside_not_held(store: SessionStore) -> None:
    """A torn last line was held twice for as long as its session stayed open: as bytes
    until the first write cut it, and decoded in the load's report (only its length was
    ever used), in a read-only view too; 16 MB left 32 MB held by one open session."""
    sid = turns(store, "torn", 2, random.Random(SEED + 62))
    store.close()
    path = store.path_for(sid)
    torn = b'{"type": "message", "message": {"content": "' + b"y" * LINE
    with path.open("ab") as handle:
        handle.write(torn)

    before = tracemalloc.get_traced_memory()[0]
    session = store.get(sid)
    assert any(f"torn last line ({len(torn)} bytes)" in p for p in session.load_problems)
    assert held_since(before) < LINE // 4

    session.append([say("written after it")])
    assert held_since(before) < LINE // 4
    assert path.with_suffix(".jsonl.torn").read_bytes() == torn + b"\n"
    assert not path.read_bytes().count(b"y" * 100)


@pytest.mark.usefixtures("traced")
def test_a_huge_unreadable_line_is_read_with_few_copies_of_it(store: SessionStore) -> None:
    """The read of an unreadable line held a copy of it too many: the line with its newline
    cut off for the second parser, beside the line and that parser's text of it (a line of
    200 MB: the read's peak 765 MB over the start, 574 MB now). Both parsers take the
    newline as white space: the line goes to the second as it was read."""
    sid = turns(store, "garbage", 1, random.Random(SEED + 63))
    store.close()
    with store.path_for(sid).open("ab") as handle:
        handle.write(b"x" * LINE + b"\n")
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]

    session = store.get(sid)

    assert session.damage.lines == 1
    assert tracemalloc.get_traced_memory()[1] - before < 3 * LINE + LINE // 4  # was 4
