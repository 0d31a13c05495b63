"""A file's text for a restore: read from the editor or disk (its head when large, a
reference when far too large, nothing when binary or unreadable), and the attachment text
that fits a room of tokens (cut and marked when it does not)."""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path

from baton.core.compaction.retention.facts import CountText, cut_to_tokens
from baton.core.compaction.working_set.visible import COPY_NOTE, CUT_NOTE, REFERENCE_NOTE
from baton.core.conversation.files import open_read
from baton.core.conversation.records import unwritable

LARGE_FILE_BYTES = 1_000_000
REFERENCE_FACTOR = 10  # a file this many times over its budget is only referenced
BYTES_PER_TOKEN = 4  # a typical source file: about four bytes per token
READ_BYTES_PER_TOKEN = 8  # reading twice that is always enough to fill the budget
SNIFF_BYTES = 8192
MIN_USEFUL_TOKENS = 64


@dataclass
class Content:
    text: str | None  # None: restore as a reference
    size: int
    partial: bool  # the text is only the head of the file


def decode_utf8(data: bytes, partial: bool) -> str | None:
    if b"\x00" in data:
        return None
    try:
        # A head read may end inside a multi-byte character; only that tail may be incomplete.
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=not partial)
    except UnicodeDecodeError:
        return None


def read_content(path: Path, live_text: str | None, per_file: int, room: int) -> Content | None:
    """The file's text (its head when large), a reference, or None (binary, gone, unreadable).
    Too big means over 1 MB or ten times the per-file budget; at most what `room` tokens
    can use is read."""
    too_big = min(LARGE_FILE_BYTES, per_file * BYTES_PER_TOKEN * REFERENCE_FACTOR)
    if live_text is not None:
        if "\x00" in live_text:
            return None
        size = len(live_text)
        if size > too_big:
            return Content(None, size, True)
        return Content(live_text, size, False)
    try:
        # only a regular file, told by the file opened (`open_read`): a FIFO put there
        # after a look at its name would be waited on, on the server's loop
        with open_read(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > too_big:
                # Only sniff the head: a binary file is skipped, not referenced.
                return (
                    Content(None, size, True)
                    if decode_utf8(handle.read(SNIFF_BYTES), True) is not None
                    else None
                )
            # never more than a file this size can hold, however large the budget
            limit = min(room * READ_BYTES_PER_TOKEN, too_big) + SNIFF_BYTES
            data = handle.read(limit + 1)
    except OSError:
        return None
    partial = len(data) > limit
    text = decode_utf8(data[:limit] if partial else data, partial)
    return None if text is None else Content(text, size, partial)


def writable(text: str) -> bool:
    """Whether a transcript can hold `text` (no lone surrogate)."""
    return unwritable(text) is None


def _human(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} kB"
    return f"{size} bytes"


def _fence(text: str) -> str:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


fence = _fence  # the fence around an attachment's text, for every attachment


def attachment_text(
    heading: str, source: str, content: Content, room: int, count: CountText
) -> tuple[str, bool] | None:
    """The attachment text within `room` tokens and whether it was cut; None if nothing fits."""
    reference = (
        f"{heading}\n{REFERENCE_NOTE}the file is {_human(content.size)}, too large to "
        "restore here. Read it with a tool if it is needed."
    )
    if content.text is None:
        return (reference, True) if count(reference) <= room else None
    fence = _fence(content.text)
    head = f"{heading}\n{COPY_NOTE}{source}"
    whole = f"{head}.\n{fence}\n{content.text}\n{fence}"
    if not content.partial and count(whole) <= room:
        return whole, False
    overhead = count(f"{head} (cut at {room:,} tokens).\n{fence}\n\n{fence}") + 4
    if room - overhead < MIN_USEFUL_TOKENS:
        return (reference, True) if count(reference) <= room else None
    cut = cut_to_tokens(content.text, room - overhead, count)
    note = f" {CUT_NOTE}{count(cut):,} tokens)"
    return f"{head}{note}.\n{fence}\n{cut}\n{fence}", True
