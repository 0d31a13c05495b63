"""Reading a transcript: its lines streamed one at a time, each parsed as `json` reads it.

A pass holds one line at a time, never the whole file, its list of lines or every event at
once: a session is rebuilt from the events as they are read, and they are dropped after.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from baton.core.conversation.files import identity, open_read, open_regular

Event = dict[str, Any]
# what one read of the file takes in (a few thousand lines): the read lets go of the
# interpreter, and a thread taking it back sooner than every 5 ms (the interpreter's switch
# interval) starves the event loop waiting for it, the loop's own switch request reset at
# each read (with reads of 4 KB, a lane's load of 100,000 messages held a request on the
# loop 83-425 ms at a time; with reads of 1 MB, never over 30 ms)
READ_BUFFER = 1 << 20


@dataclass
class LoadReport:
    """What loading a transcript found besides its events."""

    torn_bytes: int | None = None  # the length of a partial last line, skipped
    bad_lines: list[int] = field(default_factory=list)  # 1-based numbers of skipped lines
    # where those lines are in the file, (offset, length): what is copied aside is read
    # from there, never held (a line may be hundreds of MB)
    bad_spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        out: list[str] = []
        if self.torn_bytes is not None:
            out.append(f"skipped a torn last line ({self.torn_bytes} bytes)")
        out.extend(f"skipped unreadable line {n}" for n in self.bad_lines)
        return out


class LinePass:
    """One read of a transcript's first `limit` bytes (all of it when None), line by line.

    Iterating yields the events; what could not be read goes into `report`. Once the pass
    is done, `end` is how many bytes it read and `tail` the last line when the bytes read
    do not end on a newline (None when they do). A line is the bytes between newlines; a
    blank one is skipped; one that is not a JSON object is reported by its 1-based number,
    except an unreadable last line without a newline, which is a torn line.
    """

    def __init__(self, path: Path, limit: int | None = None) -> None:
        self.path = path
        self.limit = limit
        self.report = LoadReport()
        self.end = 0
        self.tail: bytes | None = None
        self.file: tuple[int, int] | None = None  # the (device, inode) read, once opened
        self.mtime: int | None = None  # its mtime then

    def __iter__(self) -> Iterator[Event]:
        report = self.report
        # only a regular file is read: never a link, a FIFO or a device
        with os.fdopen(open_regular(self.path, os.O_RDONLY), "rb", READ_BUFFER) as handle:
            st = os.fstat(handle.fileno())
            self.file, self.mtime = identity(st), st.st_mtime_ns
            # read to its end, the file's own iterator gives its lines (one generator less
            # for each line of a load)
            segments = handle if self.limit is None else self._segments(handle)
            for number, segment in enumerate(segments, start=1):
                start = self.end
                self.end += len(segment)
                ends_line = segment.endswith(b"\n")
                if not ends_line:
                    self.tail = segment
                if not segment or segment.isspace():  # its newline is whitespace too
                    continue
                try:
                    event = _parse_segment(segment, ends_line)
                except ValueError:  # not JSON, not UTF-8, nested too deep
                    line = segment[:-1] if ends_line else segment
                    if ends_line:
                        report.bad_lines.append(number)
                        report.bad_spans.append((start, len(line)))
                    else:
                        report.torn_bytes = len(line)
                    continue
                if not isinstance(event, dict):
                    report.bad_lines.append(number)
                    report.bad_spans.append((start, len(segment) - ends_line))
                    continue
                yield event

    def _segments(self, handle: Any) -> Iterator[bytes]:
        """The file's lines with their newlines, up to `limit` bytes."""
        left = -1 if self.limit is None else self.limit
        while left:
            segment: bytes = handle.readline(left)
            if not segment:
                return
            if left > 0:
                left -= len(segment)
            yield segment


HEADER_BYTES = 1 << 20  # a header is a line of a few hundred bytes; one past this is none


def headless_transcript(path: Path) -> bool:
    """Whether `path` (a regular file the caller found with no Baton header) is a Baton
    transcript whose first line was lost or torn: among its first lines, the first JSON
    object is a Baton record."""
    with open_read(path) as handle:
        for _ in range(HEADLESS_LINES):
            line = handle.readline(HEADER_BYTES)
            try:
                event = parse_line(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                field = HEADLESS_RECORDS.get(str(event.get("type")))
                return field is not None and isinstance(event.get(field), dict)
    return False


HEADLESS_LINES = 8  # a torn header line, then the records
# Baton's records of a conversation, by the object each carries (no Claude Code record
# has these types; an imported file's records Baton keeps but does not read are "opaque")
HEADLESS_RECORDS = {"message": "message", "boundary": "boundary", "opaque": "record"}


def baton_header(path: Path) -> Event | None:
    """The header of the Baton transcript at `path` (a regular file the caller found),
    its first line `{"type": "session", "format": 1, ...}`; None for any other file."""
    with open_read(path) as handle:
        first = handle.readline(HEADER_BYTES)
    try:
        header = parse_line(first)
    except ValueError:  # a line nested past the parser's depth included
        return None
    if isinstance(header, dict) and header.get("type") == "session" and "format" in header:
        return header
    return None


def _parse_segment(segment: bytes, ends_line: bool) -> Any:
    """A line read with its newline, parsed as `parse_line` parses the line without it: to
    both parsers the newline is whitespace, so the line is not copied to cut it off (an
    unreadable line of 200 MB held three copies of itself: the line, the line cut, and
    `json`'s text of it). Only a line whose first bytes hold a NUL, which `json` may read as
    UTF-16 or UTF-32 by its length, goes without its newline."""
    try:
        return from_json(segment)
    except ValueError:
        if ends_line and b"\x00" in segment[:4]:
            segment = segment[:-1]
        return parse_line(segment)


def parse_line(line: bytes) -> Any:
    """One JSON line, read by pydantic-core's parser (about twice as fast as `json`); a
    line it refuses (a lone surrogate escape, a BOM, bad JSON) is left to `json`, whose
    verdict stands, so every line reads as `json.loads` reads it. ValueError for a line
    that is no JSON, one nested past `json`'s depth included (a RecursionError there)."""
    try:
        return from_json(line)
    except ValueError:
        try:
            return json.loads(line)
        except RecursionError:
            raise ValueError("JSON nested too deep to read") from None
