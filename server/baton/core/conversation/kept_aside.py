"""The lines of a transcript kept aside, a bounded read at a time, never held whole (a line
may be hundreds of MB): its torn last line copied to `.torn` before it is cut, and its
unreadable lines to `.bad`, each once (a `.bad` grows over the years)."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from baton.core.conversation.files import cause, open_regular, storage_error, sync_dir, write_all
from baton.core.errors import StorageError

log = logging.getLogger(__name__)

CHUNK = 1 << 20  # the most read at once, of the transcript or of the `.bad`


@dataclass(frozen=True)
class Line:
    """One line without its newline: `length` bytes at `at` of the file `fd`, or `data` (a
    record held as such) when `fd` is None."""

    fd: int | None
    at: int
    length: int
    data: bytes = b""

    def chunks(self) -> Iterator[bytes]:
        """Its bytes, CHUNK at a time (the last piece shorter): two lines of one length
        come in pieces of the same sizes."""
        for start in range(0, self.length, CHUNK):
            size = min(CHUNK, self.length - start)
            if self.fd is None:
                yield self.data[start : start + size]
            else:
                yield _read(self.fd, self.at + start, size)

    def key(self) -> tuple[int, bytes]:
        digest = hashlib.blake2b(digest_size=16)
        for piece in self.chunks():
            digest.update(piece)
        return self.length, digest.digest()


def record(data: bytes) -> Line:
    return Line(None, 0, len(data), data)


def keep_aside(aside: Path, lines: Sequence[Line]) -> None:
    """Append to `aside` (created 0600 when missing) each of `lines` it does not hold yet,
    each once, then sync it; on a failure it is cut back to what it held and the OSError (or
    the `StorageError` of a file that is no regular one) raised. A line is found by its
    length and hash, then its bytes compared; nothing is read more than CHUNK at once."""
    fd = open_regular(aside, os.O_RDWR | os.O_CREAT | os.O_APPEND)
    try:
        distinct, wanted = _distinct(lines)
        last = _strike_held(fd, wanted)
        left = {id(line) for group in wanted.values() for line in group}
        new = [line for line in distinct if id(line) in left]  # in the order given
        if new:
            _append(fd, new, last)
    finally:
        os.close(fd)
    if new:
        sync_dir(aside.parent)


def end_on_newline(
    fd: int, path: Path, size: int, tail: int, *, torn: bool, stays: bool = False
) -> int:
    """Make the file `fd` (at `path`, `size` bytes ending in a last line of `tail` bytes
    without its newline) end on a newline so the next append starts a fresh line; its new
    size.

    A `torn` last line (the load could not read it) is first copied in full beside the
    transcript (`.torn`) and synced, a bounded read at a time; only then is it cut, and
    when the copy fails nothing is cut (`StorageError`), unless the line `stays`: for the
    file's last write (a delete), it is then left where it is, ended by a newline as a
    complete last record is, the failure logged; the transcript keeps it. A complete last
    record that only lacks its newline gets one."""
    if torn:
        refused = _copy_torn(fd, path, size, tail)
        if refused is None:
            try:
                os.ftruncate(fd, size - tail)
                os.fsync(fd)
            except OSError as exc:
                raise storage_error("cut the torn last line of", path, exc) from None
            return size - tail
        failure, named = refused
        if not stays:
            raise StorageError(f"{failure}; nothing was cut and nothing written", path=named)
        log.warning("%s; it stays where it is in the transcript, ended by a newline", failure)
    try:
        write_all(fd, b"\n")
        os.fsync(fd)
    except OSError as exc:
        raise storage_error("end the last line of", path, exc) from None
    return size + 1


def _copy_torn(fd: int, path: Path, size: int, tail: int) -> tuple[str, str] | None:
    """Copy the torn last line to `.torn`; None when it is there, else why not and the
    path to name."""
    aside = path.with_suffix(path.suffix + ".torn")
    try:
        append_lines(aside, [Line(fd, size - tail, tail)])
    except OSError as exc:
        words = f"could not keep the torn last line of {path} aside in {aside} ({cause(exc)})"
        return words, str(path)
    except StorageError as exc:  # not a regular file, or one with a second name
        return f"could not keep the torn last line of {path} aside: {exc.message}", str(aside)
    return None


def append_lines(path: Path, lines: Sequence[Line]) -> None:
    """Append `lines` to `path` (created 0600 when missing), each with its newline, synced,
    a bounded read at a time; on a failure it is cut back to what it held and the OSError
    raised."""
    fd = open_regular(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
    try:
        size = os.fstat(fd).st_size
        _append(fd, lines, os.pread(fd, 1, size - 1) if size else b"")
    finally:
        os.close(fd)
    sync_dir(path.parent)


def _distinct(lines: Sequence[Line]) -> tuple[list[Line], dict[tuple[int, bytes], list[Line]]]:
    """`lines`, each equal to one before it left out, and those by length and hash."""
    distinct: list[Line] = []
    groups: dict[tuple[int, bytes], list[Line]] = {}
    for line in lines:
        group = groups.setdefault(line.key(), [])
        if not any(_equal(line, other) for other in group):
            group.append(line)
            distinct.append(line)
    return distinct, groups


def _strike_held(fd: int, wanted: dict[tuple[int, bytes], list[Line]]) -> bytes:
    """Take out of `wanted` each line the file `fd` holds (its last line too, without its
    newline), read until none is left to find; the file's last byte (b"" when empty), when
    some are left."""
    lengths = {length for length, _ in wanted}
    start, at, last = 0, 0, b""
    while wanted:
        block = os.pread(fd, CHUNK, at)
        if not block:
            break
        view = memoryview(block)
        begin = 0
        while (stop := block.find(b"\n", begin)) >= 0:
            length = at + stop - start
            if length in lengths:
                inside = start >= at  # the whole line is in this block
                _strike(fd, wanted, start, length, view[start - at : stop] if inside else None)
            start = at + stop + 1
            begin = stop + 1
        at += len(block)
        last = block[-1:]
    if wanted and at > start and at - start in lengths:  # a last line without its newline
        _strike(fd, wanted, start, at - start, None)
    return last


def _strike(
    fd: int,
    wanted: dict[tuple[int, bytes], list[Line]],
    at: int,
    length: int,
    data: memoryview | None,
) -> None:
    held = Line(fd, at, length)
    key = held.key() if data is None else (length, hashlib.blake2b(data, digest_size=16).digest())
    group = wanted.get(key)
    if group:
        group[:] = [line for line in group if not _equal(line, held)]
        if not group:
            del wanted[key]


def _append(fd: int, lines: Sequence[Line], last: bytes) -> None:
    start = os.fstat(fd).st_size
    try:
        if last not in (b"", b"\n"):  # a line cut short by a crash: the next starts afresh
            write_all(fd, b"\n")
        for line in lines:
            for piece in line.chunks():
                write_all(fd, piece)
            write_all(fd, b"\n")
        os.fsync(fd)
    except BaseException:
        try:
            os.ftruncate(fd, start)
            os.fsync(fd)
        except OSError:
            pass
        raise


def _equal(one: Line, other: Line) -> bool:
    return one.length == other.length and all(
        a == b for a, b in zip(one.chunks(), other.chunks(), strict=True)
    )


def _read(fd: int, at: int, size: int) -> bytes:
    """`size` bytes at `at` of `fd`, however many reads it takes."""
    data = os.pread(fd, size, at)
    while len(data) < size:
        more = os.pread(fd, size - len(data), at + len(data))
        if not more:
            raise OSError(errno.EIO, "the file ended before the line did")
        data += more
    return data
