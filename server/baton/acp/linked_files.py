"""A file a prompt links to, read from the disk for a client that cannot read it: its
text as a text read gives it, or why it was not read, never more than MAX_FILE_BYTES."""

from __future__ import annotations

import os
from pathlib import Path

from baton.core.conversation.files import NotRegularFile, open_read

MAX_FILE_CHARS = 400_000  # about 100K tokens: a larger file is named, not included
MAX_FILE_BYTES = MAX_FILE_CHARS * 4  # never read a larger file whole to find it too large


class TooLarge(Exception):
    """A linked file found over MAX_FILE_BYTES as it is read (it grew since its check)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


class Unread(Exception):
    """A linked file that was not read, and why, as its note says it."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def disk_text(path: Path) -> str:
    """A linked file's text on the disk, line ends as a text read gives them, for a client
    that has none; Unread saying why when it cannot be read, is binary or no UTF-8 text.
    The file opened is the one read, never waited on, and no further than MAX_FILE_BYTES:
    another program may have put a FIFO or a larger file in place of the one checked
    (NotRegularFile, TooLarge)."""
    try:
        with open_read(path) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
            size = os.fstat(handle.fileno()).st_size
    except NotRegularFile:
        raise
    except FileNotFoundError:
        raise Unread("no such file") from None
    except OSError as exc:
        raise Unread(f"it cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge(max(size, len(data)))
    if b"\x00" in data:  # no text file holds a NUL byte
        raise Unread("a binary file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unread("no UTF-8 text") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
