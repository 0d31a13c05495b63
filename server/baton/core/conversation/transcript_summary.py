"""One transcript summarized for the session list: a streamed pass over its lines (each
parsed as JSON, never replayed into a session, a line too long to parse read from its two
ends), continued from where the last pass ended when the file only grew since."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import IO

from baton.core.conversation.files import open_regular
from baton.core.conversation.summary_entry import Entry
from baton.core.conversation.transcript_read import READ_BUFFER, parse_line

CHUNK = 1 << 16  # the most one line read holds
LONG_LINE = 1 << 20  # a longer line is not parsed: its type, id and time come from its ends
EDGE = 4096  # how much of a long line's start and end is kept
SMALL = 1 << 18  # a file (or what was appended to it) up to this size is read in one go
MARK = 32  # the bytes before a summary's end that tell the file only grew since
MASK = (1 << 64) - 1
GIVE_WAY = 256  # lines read between two looks at `give_way`
CLOCK_EVERY = 16  # reads (of at most CHUNK bytes) between two looks at the clock


def identity(st: os.stat_result) -> int:
    """A hash of the file's device, inode, size and mtime (64 bits, never negative)."""
    return hash((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)) & MASK


def file_of(st: os.stat_result) -> int:
    return hash((st.st_dev, st.st_ino))


def summarize(
    path: str,
    st: os.stat_result,
    before: Entry | None,
    *,
    whole: bool,
    give_way: Callable[[], object] | None = None,
    deadline: float | None = None,
) -> Entry:
    """The summary of `path` (whose `lstat` is `st`), continuing `before` when the file
    only grew since, or when `before` stopped short and the file is as it was or only
    grew; only its header when not `whole`. `give_way` is called every GIVE_WAY lines of a
    long read: it may wait there for another thread's work. Past `deadline` (a
    `time.monotonic()`), the read stops at the last whole line read: the summary is
    incomplete, and the next one goes on from there (a file of gigabytes is read a
    list's time at a time, never holding a list up longer)."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        entry = before if before is not None and _continues(fd, st, before) else None
        if entry is None:
            entry = Entry(identity(st), file_of(st))
        entry.identity = identity(st)
        entry.size = st.st_size
        entry.complete = whole
        if whole and st.st_size - entry.end <= SMALL:
            _read_small(fd, entry, st.st_size)
        else:
            # a lane's read gives the interpreter back to the loop: READ_BUFFER's note
            with os.fdopen(os.dup(fd), "rb", buffering=READ_BUFFER) as handle:
                handle.seek(entry.end)
                _read(handle, entry, st.st_size, whole, give_way, deadline)
        if entry.end:
            start = max(0, entry.end - MARK)
            entry.mark = hash(os.pread(fd, entry.end - start, start))
    finally:
        os.close(fd)
    return entry


def written_summary(path: str, st: os.stat_result, entry: Entry) -> Entry:
    """The summary `summarize` makes of `path` (whose `lstat` is `st`), from `entry`, all
    the events its writer wrote given to it in order (`Entry.written`, every line of the
    file): none of the file is read but the MARK bytes before its end."""
    entry.identity, entry.file = identity(st), file_of(st)
    entry.end = entry.size = st.st_size
    fd = open_regular(path, os.O_RDONLY)
    try:
        start = max(0, st.st_size - MARK)
        entry.mark = hash(os.pread(fd, st.st_size - start, start))
    finally:
        os.close(fd)
    return entry


def _read_small(fd: int, entry: Entry, size: int) -> None:
    """`_read` for what fits in one read: every line up to the last newline, parsed."""
    data = os.pread(fd, size - entry.end, entry.end)
    last = data.rfind(b"\n")
    if last < 0:
        return
    for line in data[:last].split(b"\n"):
        _line(entry, line)
    entry.end += last + 1


def _continues(fd: int, st: os.stat_result, before: Entry) -> bool:
    """Whether the file is the one `before` summarized, with lines appended after it, or,
    when `before` stopped short, untouched since. One that did not grow but changed was
    changed in place (its mtime moved, an editor saved it over itself, lines swapped): it
    is read again whole. One that grew is taken for appended to when the bytes before the
    old end are those it had (`mark`)."""
    if before.file != file_of(st) or st.st_size < before.size:
        return False
    if not before.end and not before.scanned:
        return False
    if st.st_size == before.size and (before.complete or identity(st) != before.identity):
        return False
    start = max(0, before.end - MARK)
    return hash(os.pread(fd, before.end - start, start)) == before.mark


def _read(
    handle: IO[bytes],
    entry: Entry,
    size: int,
    whole: bool,
    give_way: Callable[[], object] | None = None,
    deadline: float | None = None,
) -> None:
    """The lines from the handle's position up to `size` bytes into the file: each whole
    line is given to `entry` (parsed when under LONG_LINE); a last line without its
    newline is left for the next summary, as are all lines after the first when not
    `whole`, and all lines not read by `deadline` (the entry is then incomplete)."""
    left = size - entry.end
    pieces: list[bytes] | None = []
    length, head, tail = 0, b"", b""
    if entry.scanned:  # inside a line too long to parse when time ran out: on from there
        length, pieces = entry.scanned - entry.end, None
        head, tail = _bytes_at(handle, entry.end), _bytes_at(handle, entry.scanned - EDGE)
        handle.seek(entry.scanned)
        left -= length
        entry.scanned = 0
    lines = 0
    while left > 0:
        lines += 1
        if give_way is not None and not lines % GIVE_WAY:
            give_way()
        if deadline is not None and not lines % CLOCK_EVERY and time.monotonic() > deadline:
            entry.complete = False
            if pieces is None:  # a line of gigabytes is read a list's time at a time
                entry.scanned = entry.end + length
            return
        segment = handle.readline(min(CHUNK, left))
        if not segment:
            break
        left -= len(segment)
        complete = segment.endswith(b"\n")
        if length == 0 and complete:
            _line(entry, segment[:-1])
            entry.end += len(segment)
        else:
            head = head or segment[:EDGE]
            tail = (tail + segment)[-EDGE:]
            length += len(segment)
            if pieces is not None:
                pieces.append(segment)
                if length > LONG_LINE:
                    pieces = None
            if not complete:
                continue
            if pieces is not None:
                _line(entry, b"".join(pieces)[:-1])
            else:
                entry.long_line(head, tail)
            entry.end += length
            pieces, length, head, tail = [], 0, b"", b""
        if not whole and not entry.first:
            break


def _bytes_at(handle: IO[bytes], start: int) -> bytes:
    """EDGE bytes of the file from `start` on."""
    handle.seek(start)
    return handle.read(EDGE)


def _line(entry: Entry, line: bytes) -> None:
    if not line or line.isspace():
        return
    try:
        event = parse_line(line)
    except ValueError:
        event = None
    if isinstance(event, dict):
        entry.event(event)
    else:
        entry.bad_lines += 1
