"""Reading a Claude Code file one record at a time: JSONL lines or the JSON array's items.

Neither the file, its lines nor its records are ever held all at once: a record is handed
on as soon as it is parsed and dropped after. A line that is not a JSON object (broken,
torn, NaN or Infinity, which are not JSON, or nested deeper than `MAX_DEPTH`) is skipped
and its number reported; a JSON array that does not parse is refused whole.
"""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from baton.core.conversation.files import open_read
from baton.core.conversation.transcript import unwritable
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code_array import array_items
from baton.core.importers.claude_code_json import loads
from baton.core.importers.read_fingerprint import Edges

MAX_IMPORT_BYTES = 256 * 1024 * 1024
PROBE = 65536  # bytes looked at for a NUL (a binary file) and the first character
# the file's lines are taken from a buffer this big: through the default 8 KB one, the
# read makes a system call every few lines, and a line longer than it is several reads
# joined
READ_BUFFER = 1024 * 1024

Progress = Callable[[int, int], None]  # (bytes read, bytes in the file)


class ImportCancelled(Exception):
    """The import was cancelled; nothing was written."""


@dataclass
class Reading:
    """What a read of the file met besides its records: the numbers of the lines (or array
    items) that are no record, and the bytes up to the end of the last whole line, which
    is what an import took of a file Claude Code may be writing to meanwhile (a line cut
    short is not taken: the next import of the file reads it whole), with the ends of
    those bytes, for their fingerprint."""

    broken: list[int] = field(default_factory=list)
    array: bool = False  # `broken` numbers a JSON array's items, not lines
    taken: int = 0
    edges: Edges = field(default_factory=Edges)
    # where the line of the record last handed on begins, and the file open for the
    # read, which a line can be read again from: None for an array's item
    start: int | None = None
    handle: BinaryIO | None = None

    def take(self, piece: bytes) -> None:
        """The bytes after those taken so far, taken."""
        self.taken += len(piece)
        self.edges.add(piece)


def open_import(path: Path) -> tuple[BinaryIO, int]:
    """The file, open for reading, and its size; InvalidParams when it cannot be imported."""
    try:
        handle = open_read(path, buffering=READ_BUFFER)
        size = os.fstat(handle.fileno()).st_size  # the file opened's, not the name's before
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror or exc}") from None
    if size > MAX_IMPORT_BYTES:
        handle.close()
        raise InvalidParams(
            f"{path.name} is {size:,} bytes; imports are limited to {MAX_IMPORT_BYTES:,}"
        )
    return handle, size


def records(
    path: Path,
    reading: Reading,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Iterator[tuple[dict[str, Any], int]]:
    """(record, bytes of the file read so far) of every JSON object in the file, in order,
    read to its end as it is then (Claude Code may append to it meanwhile); the numbers of
    lines (or items) that are not one, and the bytes taken, go into `reading`. Raises
    ImportCancelled as soon as `cancel` is set; InvalidParams for a file that is no Claude
    Code session at all, or that holds text no transcript can hold (a lone surrogate)."""
    handle, size = open_import(path)
    with handle:
        try:
            head = handle.read(PROBE)
        except OSError as exc:
            raise InvalidParams(f"cannot read {path}: {exc.strerror or exc}") from None
        if _utf16(head):
            raise InvalidParams(
                f"{path.name} is UTF-16 text; Claude Code writes its sessions in UTF-8: save "
                "it as UTF-8 to read it"
            )
        if b"\0" in head:
            raise InvalidParams(f"{path.name} is a binary file, not a Claude Code session")
        handle.seek(0)
        # a byte order mark (Windows tools write one) may come before the array
        reading.array = head.removeprefix(codecs.BOM_UTF8).lstrip()[:1] == b"["
        reading.handle = None if reading.array else handle
        if reading.array:
            items = array_items(handle, path, reading)
            found = yield from _checked(items, path, size, reading, progress, cancel)
        else:  # the lines checked as they are read: a generator fewer for each record
            found = yield from _lines(handle, path, size, reading, progress, cancel)
        _not_cut_short(handle, path)
    if not found:
        raise InvalidParams(
            f"{path.name} is not a Claude Code session file "
            "(expected one JSON record per line, or a JSON array of records)"
        )


def _checked(
    items: Iterator[Item],
    path: Path,
    size: int,
    reading: Reading,
    progress: Progress | None,
    cancel: threading.Event | None,
) -> Generator[tuple[dict[str, Any], int], None, int]:
    """(record, bytes read) of each of `items` that is a JSON object, the others' numbers
    noted in `reading`; returns how many there were (`records`; `_lines` does the same)."""
    found = 0
    for number, item, at, escaped in items:
        _going_on(cancel, progress, at, size)
        if not isinstance(item, dict):
            reading.broken.append(number)
            continue
        if escaped:
            _writable(item, path, number)
        found += 1
        yield item, at
    return found


def _going_on(
    cancel: threading.Event | None, progress: Progress | None, at: int, size: int
) -> None:
    """ImportCancelled once `cancel` is set; else `at` bytes of `size` told to `progress`."""
    if cancel is not None and cancel.is_set():
        raise ImportCancelled("the import was cancelled; nothing was written")
    if progress is not None:
        progress(at, size)


def _writable(item: dict[str, Any], path: Path, number: int) -> None:
    """InvalidParams when a string of record `number` cannot be written as UTF-8."""
    where = unwritable(item)
    if where is not None:
        raise InvalidParams(
            f"{path.name} holds text that cannot be written as UTF-8 (a lone "
            f"surrogate) at record {number}: {where.lstrip('.') or 'its value'}"
        )


def _not_cut_short(handle: BinaryIO, path: Path) -> None:
    """InvalidParams when the file is shorter than what was read of it: truncated under the
    read (a shorter copy written over it), so that what was read is no longer the file,
    and its last piece, cut, would pass for a line Claude Code was still writing."""
    read, now = handle.tell(), os.fstat(handle.fileno()).st_size
    if now < read:
        raise InvalidParams(
            f"{path.name} was cut short while it was imported ({read:,} bytes read, {now:,} "
            "now): nothing was imported; import it again"
        )


def _utf16(head: bytes) -> bool:
    """Whether the file is UTF-16 text (Windows PowerShell's `>` writes it): its byte order
    mark, or a record's first character beside a NUL."""
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return True
    return head[:2] in (b"{\0", b"[\0", b"\0{", b"\0[")


Item = tuple[int, Any, int, bool]  # number, value, bytes read, whether it may hold a surrogate


def _lines(
    handle: BinaryIO,
    path: Path,
    size: int,
    reading: Reading,
    progress: Progress | None,
    cancel: threading.Event | None,
) -> Generator[tuple[dict[str, Any], int], None, int]:
    """(record, bytes read) of each of the file's lines that is a JSON object, the others'
    numbers noted in `reading` (as `_checked` does), up to its end as the read first
    reaches it: a line with no line end is the last one read, since Claude Code may be
    writing it (what it writes next would read as a line of its own, the rest of that
    one). Returns how many records there were."""
    at = found = 0
    edges = reading.edges
    for number, line in enumerate(handle, start=1):
        at += len(line)
        cut = line[-1] != 10  # no b"\n" at its end (endswith's arguments cost more)
        if line.isspace():
            reading.take(line)
            if cut:
                return found
            continue
        try:
            value, surrogates = loads(line)
        except ValueError:
            value, surrogates = None, False
        # a last line with no line end is whole if it parses (a copy saved without one),
        # else Claude Code may still be writing it
        if not cut or value is not None:
            reading.start = reading.taken
            reading.taken += len(line)  # `Reading.take`, written out: a call for each line
            edges.add(line)
        if cancel is not None or progress is not None:  # `_going_on`, for a server's import
            _going_on(cancel, progress, at, size)
        if isinstance(value, dict):
            # `json` (never pydantic-core's parser) reads "\\ud800" escapes, and raw
            # surrogate bytes, as lone surrogates
            if surrogates and (b"\\ud" in line or b"\\uD" in line or b"\xed" in line):
                _writable(value, path, number)
            found += 1
            yield value, at
        else:
            reading.broken.append(number)
        if cut:
            return found
    return found
