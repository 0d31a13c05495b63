"""The files Baton writes beside a transcript, at a session's first write: the copy of a
torn last line (`.torn`) and the unreadable lines kept aside (`.bad`). What is refused is
told as what it is, a write, naming the path."""

from __future__ import annotations

import errno
import logging
import os
import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_data_dir_files import SEED, say, torn, turns

from baton.core.conversation import kept_aside
from baton.core.conversation.kept_aside import CHUNK
from baton.core.conversation.store import SessionStore
from baton.core.errors import SessionNotFound, StorageError

WRITE_REFUSED = "Baton writes only regular files, never through a link"
HUGE = 32 << 20  # bytes: one line of the `.bad`
SMALL = 160_000  # the `.bad`'s other lines, about 16 MB of them


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


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


@pytest.mark.usefixtures("traced")
def test_a_huge_bad_copy_is_compared_a_bounded_read_at_a_time(store: SessionStore) -> None:
    """The first write of a session read its whole `.bad` into memory to see which
    unreadable lines it held already: one of 48 MB (years of bad lines, and one of 32 MB)
    took 48 MB more at that write, whatever the session. It is compared a bounded read at a
    time now, the lines it holds still not copied again, the others copied once."""
    rng = random.Random(SEED + 73)
    sid = turns(store, "bad", 1, rng)
    store.close()
    path = store.path_for(sid)
    held_huge = b"{" + bytes(rng.choice(b"abc[") for _ in range(256)) * (HUGE // 256)
    small = [b"garbage %d" % n for n in range(SMALL)]
    aside = path.with_suffix(".jsonl.bad")
    aside.write_bytes(b"\n".join([*small, held_huge, b"last"]) + b"\n")
    new_huge = b"[" + held_huge[1:]  # as long, not the same
    with path.open("ab") as handle:  # lines it holds, lines it does not, one twice
        for line in (small[7], held_huge, b"fresh", new_huge, b"fresh", b"last"):
            handle.write(line + b"\n")
    session = store.get(sid)
    assert session.damage.lines == 6

    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    session.append([say("written after them")])
    peak = tracemalloc.get_traced_memory()[1] - before

    assert peak < 8 * CHUNK  # a few reads' worth, not the file (HUGE is 32 reads' worth)
    kept = aside.read_bytes().split(b"\n")
    assert kept == [*small, held_huge, b"last", b"fresh", new_huge, b""]


@pytest.mark.usefixtures("traced")
def test_a_huge_torn_last_line_is_copied_aside_a_bounded_read_at_a_time(
    store: SessionStore,
) -> None:
    """The write that cuts a torn last line read it whole, parsed it again and joined it to
    its newline for the copy: 32 MB torn took 96 MB at that write. The load's verdict is
    kept instead, and the line copied a bounded read at a time."""
    sid = turns(store, "torn", 1, random.Random(SEED + 75))
    store.close()
    path = store.path_for(sid)
    torn_line = b'{"type": "message", "message": {"content": "' + b"y" * HUGE
    with path.open("ab") as handle:
        handle.write(torn_line)
    session = store.get(sid)
    before_write = path.read_bytes()[: -len(torn_line)]

    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    session.append([say("written after it")])
    peak = tracemalloc.get_traced_memory()[1] - before

    assert peak < 8 * CHUNK
    assert path.with_suffix(".jsonl.torn").read_bytes() == torn_line + b"\n"
    assert path.read_bytes().startswith(before_write + b"{")  # cut, then the new line
    store.close()
    assert [m.text() for m in store.get(sid).view_messages()][-1] == "written after it"


def expected_aside(held: bytes, wanted: list[bytes]) -> bytes:
    """What `.bad` holds after `wanted` is kept aside, worked out whole: its lines (a last
    one without its newline too) are not copied again, the others once each, in order."""
    pieces = held.split(b"\n")
    have = set(pieces[:-1]) | ({pieces[-1]} if pieces[-1] else set())
    new = [line for line in dict.fromkeys(wanted) if line not in have]
    if not new:
        return held
    ended = held + b"\n" if held and not held.endswith(b"\n") else held
    return ended + b"".join(line + b"\n" for line in new)


def test_lines_are_kept_aside_once_wherever_the_reads_cut_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads of a few bytes cut lines of either file anywhere (within a line, at its
    newline, a line longer than a read); each line is found as whole reads found it."""
    monkeypatch.setattr(kept_aside, "CHUNK", 3)
    rng = random.Random(SEED + 74)

    def some_line() -> bytes:
        return bytes(rng.choice(b"ab") for _ in range(rng.randint(0, 8)))

    for n in range(300):
        source, aside = tmp_path / f"{n}.jsonl", tmp_path / f"{n}.jsonl.bad"
        held = b"\n".join(some_line() for _ in range(rng.randint(0, 6)))
        held += rng.choice([b"", b"\n"])
        if held or rng.random() < 0.5:
            aside.write_bytes(held)
        wanted = [some_line() for _ in range(rng.randint(1, 6))]
        spans, offset = [], 0
        for line in wanted[: rng.randint(0, len(wanted))]:
            spans.append((offset, len(line)))
            offset += len(line) + 1
        source.write_bytes(b"".join(line + b"\n" for line in wanted[: len(spans)]))
        fd = os.open(source, os.O_RDONLY)
        try:
            lines = [kept_aside.Line(fd, at, length) for at, length in spans]
            records = [kept_aside.record(line) for line in wanted[len(spans) :]]
            kept_aside.keep_aside(aside, lines + records)
        finally:
            os.close(fd)
        assert aside.read_bytes() == expected_aside(held, wanted), (held, wanted)


@pytest.mark.timeout(60)  # a FIFO opened for the copy would wait for a reader
@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize("kind", ["fifo", "directory", "link", "full disk"])
def test_a_delete_keeps_a_torn_line_it_cannot_copy_aside_in_the_transcript(
    store: SessionStore, tmp_path: Path, kind: str, held: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete of a session with a torn last line failed with storage_error when its `.torn`
    was a FIFO, a directory or a link, or the disk had no room for the copy: the delete, a
    write, would cut the line and could not copy it aside first, so the session could not
    be deleted until the user took the thing away. The line now stays in the transcript,
    ended by a newline, and the delete follows it: deleted, nothing cut, `.torn` as it was."""
    sid = turns(store, "torn", 1, random.Random(SEED + 76))
    store.close()
    path = store.path_for(sid)
    tail = torn(path)
    aside = path.with_suffix(".jsonl.torn")
    if kind == "fifo":
        os.mkfifo(aside)
    elif kind == "full disk":
        real_write = os.write

        def full_disk(fd: int, data: bytes | memoryview) -> int:
            if os.readlink(f"/proc/self/fd/{fd}").endswith(".torn"):
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", full_disk)
    else:
        odd_file(aside, kind, tmp_path / "outside.txt")
    before = path.read_bytes()
    if held:
        store.get(sid)

    store.delete(sid)

    after = path.read_bytes()
    assert after.startswith(before + b"\n")  # every byte kept where it was
    assert after.splitlines()[-2] == tail
    assert after.splitlines()[-1].startswith(b'{"type":"deleted"')
    with pytest.raises(SessionNotFound, match="was deleted"):
        store.get(sid)
    fresh = SessionStore(store.data_dir, store.count)
    assert [s.session_id for s in fresh.list()] == []
    with pytest.raises(SessionNotFound, match="was deleted"):
        fresh.get(sid)
    fresh.close()
    assert aside.is_symlink() == (kind == "link")
    assert aside.is_fifo() == (kind == "fifo") and aside.is_dir() == (kind == "directory")
    assert kind != "full disk" or aside.read_bytes() == b""  # the failed copy taken back
    assert kind != "link" or (tmp_path / "outside.txt").read_text() == "kept\n"
