"""R5: a transcript replaced or deleted by another program while an append is written.

A safe-save or sync tool (`cp f f.tmp; mv f.tmp f`) or an `rm` that lands between the
check before an append and the end of its fsync takes the append's line away with the old
file. Such an append is never acknowledged: it is written again into the file that is now
there (a copy that already holds it is kept as it is: the line is not written twice), or,
the file gone, refused. After the store is opened again, every acknowledged message is
there, once. The other program's move is made at the write itself, so the race is the
same on every run; which appends it hits is seeded (BATON_SEED).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from servers import seed

from baton.core.conversation import transcript
from baton.core.conversation.messages import Message, MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.errors import BatonError

TURNS = 40


def count(message: Message) -> int:
    return len(message.text())


def moved_during_writes(
    monkeypatch: pytest.MonkeyPatch, path: Path, move: Callable[[Path, bytes], None], hit: set[int]
) -> None:
    """Writes number `hit` of the transcript at `path` (but one right after such a write)
    have `move(path, bytes before the write)` done right after their bytes went into the
    file held, before its fsync."""
    write_parts = transcript.write_parts
    calls, moved = [0], [0]

    def writing(fd: int, parts: Sequence[bytes]) -> None:
        calls[0] += 1
        before = path.read_bytes() if path.exists() else b""
        write_parts(fd, parts)
        if calls[0] in hit and moved[0] != calls[0] - 1:  # not the write right after one
            moved[0] = calls[0]
            move(path, before)

    monkeypatch.setattr(transcript, "write_parts", writing)


def copied_before(path: Path, before: bytes) -> None:
    """A safe-save of the file as it was read before the write: the write is not in it."""
    copy = path.with_name(path.name + ".tmp")
    copy.write_bytes(before)
    copy.rename(path)


def copied_after(path: Path, before: bytes) -> None:
    """A safe-save of the file as it is now: the write is in it."""
    copy = path.with_name(path.name + ".tmp")
    copy.write_bytes(path.read_bytes())
    copy.rename(path)


def appended(store: SessionStore, sid: str, turns: int) -> tuple[list[str], list[str]]:
    """Append `turns` turns; the ids acknowledged and the error codes answered."""
    session = store.get(sid)
    acknowledged, refused = [], []
    for n in range(turns):
        batch = [MessageInput(id=f"u{n}", role="user", content=f"prompt {n}")]
        batch.append(MessageInput(id=f"a{n}", role="assistant", content=f"reply {n}"))
        try:
            acknowledged += session.append(batch).message_ids
        except BatonError as exc:
            refused.append(exc.code)
    return acknowledged, refused


def on_disk(data_dir: Path, sid: str) -> list[str]:
    store = SessionStore(data_dir, count)
    try:
        return [m.id for m in store.get(sid).view_messages()]
    finally:
        store.close()


@pytest.mark.parametrize("move", [copied_before, copied_after])
def test_a_safe_save_during_an_append_loses_nothing_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, move: Callable[[Path, bytes], None]
) -> None:
    rng = random.Random(seed() + 5)
    store = SessionStore(tmp_path, count)
    sid = store.create(title="saved over").session_id
    path = tmp_path / "sessions" / f"{sid}.jsonl"
    hit = set(rng.sample(range(1, TURNS + 1), TURNS // 4))
    moved_during_writes(monkeypatch, path, move, hit)

    acknowledged, refused = appended(store, sid, TURNS)
    store.close()
    monkeypatch.undo()

    assert refused == []  # each append went on into the file that is there
    assert on_disk(tmp_path, sid) == acknowledged  # all of them, once, in order
    assert len(acknowledged) == 2 * TURNS


def test_an_append_whose_file_is_deleted_while_written_is_not_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed() + 6)
    store = SessionStore(tmp_path, count)
    sid = store.create(title="deleted").session_id
    path = tmp_path / "sessions" / f"{sid}.jsonl"
    doomed = rng.randint(2, TURNS)
    kept = tmp_path / "kept.jsonl"  # what the deleting program leaves: the file up to then

    def deleted(path: Path, before: bytes) -> None:
        kept.write_bytes(before)
        path.unlink()

    moved_during_writes(monkeypatch, path, deleted, {doomed})

    acknowledged, refused = appended(store, sid, TURNS)
    store.close()
    monkeypatch.undo()

    assert refused and refused[0] == "transcript_changed"
    assert len(acknowledged) == 2 * (doomed - 1)  # none from the write the delete took
    kept.rename(path)  # put back as it was before that write: all acknowledged is there
    assert on_disk(tmp_path, sid) == acknowledged
