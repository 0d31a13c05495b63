"""A transcript's repairs at its first write: a torn last line copied aside (`.torn`) and
cut, the unreadable lines its load found copied aside (`.bad`); made ahead, off the event
loop, when they are large (`repair_now`)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from baton.core.conversation.kept_aside import Line, end_on_newline, keep_aside, record
from baton.core.conversation.transcript_file import TranscriptFile
from baton.core.errors import StorageError

log = logging.getLogger(__name__)


class TranscriptRepairs(TranscriptFile):
    """What a `Transcript`'s load (transcript.py) found to repair, kept until something is
    first written: reading never writes."""

    def __init__(
        self, path: Path, fd: int | None, *, loaded: bool = False, reason: str | None = None
    ) -> None:
        super().__init__(path, fd, loaded=loaded, reason=reason)
        # the length of a last line without its newline, left until a write (which reads
        # it again from the file: it is not held, however long)
        self._tail: int | None = None
        self._torn = False  # and whether the load could not read it (else: only its newline)
        self._aside: list[bytes] = []  # unreadable records to keep aside at the first write
        self._aside_spans: list[tuple[int, int]] = []  # and lines, where they are in the file
        # held by a write, and by a copy of the unreadable lines made ahead of the first
        # write in a worker thread (`repair_now`): neither runs while the other does
        self._writing = threading.RLock()

    @property
    def aside_path(self) -> Path:
        return self.path.with_suffix(self.path.suffix + ".bad")

    def keep_aside(self, lines: Iterable[bytes]) -> None:
        """Copy unreadable lines beside the transcript (`.bad`), each once, so that what
        a session could not load is never lost, whatever later happens to the file. The
        transcript itself keeps them (it is only ever appended to). Only the writer does
        this, when it first writes (reading never writes); a failure is logged, never fatal."""
        if not self.read_only:
            with self._writing:
                self._aside.extend(line.rstrip(b"\n") for line in lines)

    def repair_pending(self) -> int:
        """The bytes the first write copies aside before it writes: a torn last line (to
        `.torn`, then cut), the unreadable lines (to `.bad`)."""
        torn = self._tail if self._tail is not None and self._torn else 0
        return torn + sum(length for _, length in self._aside_spans) + sum(map(len, self._aside))

    def repair_now(self) -> None:
        """The repairs the first write makes before it writes, made now (from the session's
        lane, off the event loop: hundreds of MB, each line read again from the file,
        written and synced): the torn last line copied aside and cut, the unreadable lines
        copied aside. Nothing is done when the file held is no longer the one read, nor of
        the size and time it had: the write then says so. A failure is raised, the rest
        left to the write (which meets it again, and answers it)."""
        with self._writing:
            if self._fd is None or self.moved_on():
                return
            if self._tail is not None:
                self._repair_tail()
                self._mtime = os.fstat(self._fd).st_mtime_ns  # its own change, not another's
            if self._aside or self._aside_spans:
                self._write_aside()

    def _write_aside(self) -> None:
        """The unreadable lines the load found, read again from the file held (unchanged
        since: `check_current`), then the records, appended to `.bad` but for those there
        (`kept_aside`: compared and copied a bounded read at a time)."""
        assert self._fd is not None
        spans, self._aside_spans = self._aside_spans, []
        records, self._aside = self._aside, []
        lines = [Line(self._fd, at, length) for at, length in spans]
        try:
            keep_aside(self.aside_path, lines + [record(data) for data in records])
        except (OSError, StorageError) as exc:
            log.error("%s: could not keep unreadable lines aside: %s", self.path.name, exc)

    def _repair_tail(self, *, stays: bool = False) -> None:
        assert self._fd is not None and self._tail is not None and self._size is not None
        self._size = end_on_newline(
            self._fd, self.path, self._size, self._tail, torn=self._torn, stays=stays
        )
        self._tail = None
