"""A transcript's first and last lines, read without reading what lies between: what a
store needs of a session it does not hold to tell that it was deleted, or to delete it
(its header, its last record), at a cost that does not grow with the session."""

from __future__ import annotations

import os
from pathlib import Path

from baton.core.conversation.files import open_regular
from baton.core.conversation.transcript import Transcript
from baton.core.conversation.transcript_read import Event, parse_line
from baton.core.errors import StorageError, TranscriptChanged, TranscriptError

HEAD = 1 << 20  # the longest first line read (a header with a long system prompt)
TAIL = 1 << 16  # the longest last line read


def last_event(path: Path) -> Event | None:
    """The last line's event, None when the file does not end on a newline (a torn last
    line) or its last line is not one JSON object within TAIL bytes."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - TAIL)
        data = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    if not data.endswith(b"\n"):
        return None
    begin = data.rfind(b"\n", 0, len(data) - 1)
    if begin < 0 and start > 0:
        return None  # longer than TAIL
    return _event(data[begin + 1 : -1])


def deleted(path: Path) -> bool:
    """Whether the transcript's last record is its delete (nothing is written after one:
    such a session is deleted whatever comes before). False when that cannot be told from
    its end, or the file cannot be read: the caller reads the session as usual."""
    try:
        event = last_event(path)
    except (OSError, StorageError):
        return False
    return event is not None and event.get("type") == "deleted"


def delete_unread(path: Path, session_id: str, record: Event) -> bool:
    """Append `record` (a delete) to the transcript of `session_id` without reading it,
    when its header names that session and its file can be written and ends on a newline;
    False, nothing written, when it cannot be told so (the caller reads it as usual). The
    header is read through the one open the delete is written through: a file another
    program saved in its place after that open is a file replaced (nothing written)."""
    try:
        transcript = Transcript.open(path)
    except (OSError, StorageError, TranscriptError):
        return False
    with transcript:
        try:
            head = transcript.head(HEAD)
        except OSError:
            return False
        header = _first_line(head) if head is not None else None
        if header is None or header.get("type") != "session":
            return False
        if header.get("sessionId") != session_id or not transcript.skip_reading(header):
            return False
        try:
            transcript.append(record)
        except TranscriptChanged:  # checked before a byte is written
            return False
    return True


def _first_line(data: bytes) -> Event | None:
    """The first line's event, None when it is not one JSON object ending on a newline
    within `data`."""
    end = data.find(b"\n")
    return _event(data[:end]) if end >= 0 else None


def _event(line: bytes) -> Event | None:
    try:
        event = parse_line(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
