"""A cheap fingerprint of the bytes an import read: a hash of their first and last 64 KB,
taken as the read goes (the file is not read again for it), and the same of a file as it is
now, so that a later import can tell a file replaced by another of the same size from the
file it read (`earlier_imports.changed_since`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from baton.core.conversation.files import open_read

EDGE = 64 * 1024  # bytes at each end of what was read


class Edges:
    """The first and last `EDGE` bytes of what was read, as its pieces (lines, chunks) go
    by; the tail keeps a few pieces, trimmed now and then, not at every piece."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail: list[bytes] = []
        self.tail_bytes = 0

    def add(self, piece: bytes) -> None:
        if len(self.head) < EDGE:
            self.head += piece[: EDGE - len(self.head)]
        if len(piece) >= EDGE:  # the tail is this piece's end alone
            self.tail, self.tail_bytes = [piece[-EDGE:]], EDGE
            return
        self.tail.append(piece)
        self.tail_bytes += len(piece)
        if self.tail_bytes > 4 * EDGE:
            kept, size = [], 0
            while size < EDGE:
                kept.append(self.tail.pop())
                size += len(kept[-1])
            self.tail, self.tail_bytes = kept[::-1], size

    def fingerprint(self) -> str:
        return fingerprint(bytes(self.head), b"".join(self.tail)[-EDGE:])


def fingerprint(head: bytes, tail: bytes) -> str:
    """The fingerprint of bytes whose first and last `EDGE` bytes (or all, when fewer)
    are `head` and `tail`."""
    digest = hashlib.blake2b(head, digest_size=16)
    digest.update(tail)
    return digest.hexdigest()


def file_fingerprint(path: Path, size: int) -> str | None:
    """The fingerprint of the first `size` bytes of the file as it is now; None when it
    cannot be read, or holds fewer bytes."""
    try:
        with open_read(path) as handle:
            head = handle.read(min(EDGE, size))
            handle.seek(max(0, size - EDGE))
            tail = handle.read(min(EDGE, size))
    except OSError:
        return None
    if len(tail) < min(EDGE, size):
        return None
    return fingerprint(head, tail)
