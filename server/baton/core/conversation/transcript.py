"""The append-only JSONL transcript: durable appends, one writer per file, torn-line recovery."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from baton.core.conversation.files import (
    UNWRITABLE,
    cause,
    not_regular,
    open_regular,
    storage_error,
    sync_folder,
    write_parts,
)
from baton.core.conversation.folders import open_private_dir
from baton.core.conversation.records import check_writable as check_writable  # re-exported
from baton.core.conversation.records import encode, encode_parts
from baton.core.conversation.records import unwritable as unwritable  # re-exported
from baton.core.conversation.transcript_file import VIEW
from baton.core.conversation.transcript_read import Event as Event  # re-exported: the event type
from baton.core.conversation.transcript_read import LinePass, LoadReport
from baton.core.conversation.transcript_repairs import TranscriptRepairs
from baton.core.conversation.writer_lock import LOCKED, open_writer
from baton.core.errors import SessionLocked, StorageError, TranscriptError

log = logging.getLogger(__name__)
RENAME_FIELDS = frozenset({"type", "title", "at"})  # a rename's record (`SessionStore.rename`)


class Transcript(TranscriptRepairs):
    """One session's event log. Appends are acknowledged only after flush + fsync.

    The writer holds an exclusive, non-blocking `flock` on the file for as long as it is
    open; a second process that opens the same file gets a read-only transcript, and so
    does a file Baton may not write (a read-only data dir): `read_only_reason` says why.

    The events are not kept in memory: `events()` streams them from the file. The first
    complete read is the load (it fills `report`); every later read sees the same lines,
    since the file is only ever appended to, plus this transcript's own appends. Reading
    never writes: a torn last line is cut (kept aside in `.torn`) and unreadable lines are
    kept aside (`.bad`) only when something is first written. Before each append the
    file held is checked to still be the one on disk, of the size last seen, and after it
    to still be there (else the append went with the file another program took away).
    """

    def __init__(
        self, path: Path, fd: int | None, *, loaded: bool = False, reason: str | None = None
    ) -> None:
        super().__init__(path, fd, loaded=loaded, reason=reason)
        self._report = LoadReport()
        self._header: Event | None = None
        self._but_renames = 0  # the events read and written that are not a rename's record

    @property
    def report(self) -> LoadReport:
        """What the load found (the file is read now if it has not been yet)."""
        self._ensure_loaded()
        return self._report

    @property
    def header(self) -> Event | None:
        """The first event (a healthy transcript's session header), None in an empty file."""
        self._ensure_loaded()
        return self._header

    @property
    def events_but_renames(self) -> int:
        """How many events the file holds (as read and written here) but renames (a `meta`
        record of a title alone): the same count from every read of the same events, a
        torn last line or an unreadable line being none."""
        self._ensure_loaded()
        return self._but_renames

    @classmethod
    def create(cls, path: Path, header: Event) -> Transcript:
        """A new transcript whose first line is `header`; fails if the file exists.

        A create that fails (a header that cannot be written, a full disk) leaves no
        file behind and holds no lock."""
        encode([header])  # invalid_params before anything touches the disk
        # the folder checked is the one written: made private and the file made in it by
        # its descriptor (another program may swap it for a link meanwhile)
        folder = open_private_dir(path.parent)
        try:
            return cls._create_in(folder, path, header)
        finally:
            os.close(folder)

    @classmethod
    def _create_in(cls, folder: int, path: Path, header: Event) -> Transcript:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND
        try:
            fd = open_regular(path.name, flags, dir_fd=folder)
        except FileExistsError:
            raise
        except OSError as exc:
            raise storage_error("create", path, exc) from None
        transcript = cls(path, fd, loaded=True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            transcript.append(header)
            sync_folder(folder)
        except BaseException as exc:
            transcript.close()  # a check of the append may have closed it already
            with contextlib.suppress(OSError):
                os.unlink(path.name, dir_fd=folder)
            if isinstance(exc, OSError):
                raise storage_error("create", path, exc) from None
            raise
        return transcript

    @classmethod
    def open(cls, path: Path, *, writable: bool = True) -> Transcript:
        """Open an existing transcript (a regular file only), taking the writer's lock when
        `writable` and it is free; its events are read by `events()` (or on the first use
        of `report`). A file Baton may not write is opened read-only."""
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise TranscriptError(f"no transcript at {path}") from None
        except OSError as exc:
            raise storage_error("read", path, exc) from None
        if not stat.S_ISREG(mode):
            raise StorageError(not_regular(path, mode), path=str(path))
        if not writable:
            return cls(path, None, reason=VIEW)
        try:
            fd, reason = open_writer(path)
        except OSError as exc:
            if exc.errno not in UNWRITABLE:
                raise storage_error("open", path, exc) from None
            reason = f"{path} cannot be written ({cause(exc)}); it is served read-only"
            log.info("%s", reason)  # the start said it once for the whole data dir
            return cls(path, None, reason=reason)
        if fd is None:
            log.info("%s is locked by another process; opening read-only", path.name)
        return cls(path, fd, reason=reason)

    def skip_reading(self, header: Event) -> bool:
        """Take the file as read to its end without reading its lines, `header` (its first
        line, read by the caller) as its header: for one record appended to a session
        that is not replayed here (its delete). Only a file held for writing, not read
        yet, that ends on a newline (no torn line to cut) is so taken; False otherwise,
        nothing changed. Lines it could not read are not kept aside then: they stay in
        the file, as every line does."""
        if self._fd is None or self._size is not None:
            return False
        st = os.fstat(self._fd)
        size = st.st_size
        if size == 0 or os.pread(self._fd, 1, size - 1) != b"\n":
            return False
        self._size, self._mtime, self._header = size, st.st_mtime_ns, header
        return True

    def events(self) -> Iterator[Event]:
        """Every event in order, read from the file one line at a time. A file that cannot
        be read (no permission, an I/O error) is a `StorageError` naming it and the cause;
        one gone before it was read, a `TranscriptError`."""
        if self._size is None:
            yield from self._load()
            return
        try:
            yield from LinePass(self.path, self._size)
        except OSError as exc:
            raise self._unreadable(exc) from None

    def _load(self) -> Iterator[Event]:
        reading = LinePass(self.path)
        self._but_renames = 0
        try:
            for event in reading:
                if self._header is None:
                    self._header = event
                if event.get("type") != "meta" or not event.keys() <= RENAME_FIELDS:
                    self._but_renames += 1
                yield event
        except OSError as exc:
            self.close()  # a file that cannot be read is not held locked
            raise self._unreadable(exc) from None
        self._report = reading.report
        self._size = reading.end
        self._mtime = reading.mtime
        self._read = reading.file
        self._tail = len(reading.tail) if reading.tail is not None else None
        blank = reading.tail is not None and reading.tail.isspace()  # read as no line at all
        self._torn = self._report.torn_bytes is not None or blank
        for problem in self._report.problems:
            log.warning("%s: %s", self.path.name, problem)
        if not self.read_only:
            self._aside_spans = list(self._report.bad_spans)

    def _unreadable(self, exc: OSError) -> StorageError | TranscriptError:
        if isinstance(exc, FileNotFoundError):
            return TranscriptError(f"no transcript at {self.path}")
        return storage_error("read", self.path, exc)

    def _ensure_loaded(self) -> None:
        if self._size is None:
            for _ in self._load():
                pass

    def append(self, event: Event) -> None:
        self.append_many([event])

    def append_last(self, event: Event) -> None:
        """Append `event`, after which nothing is written (a delete): a torn last line that
        cannot be copied aside stays where it is, ended by a newline (`end_on_newline`)."""
        self.append_many([event], last=True)

    def append_many(self, events: Iterable[Event], *, last: bool = False) -> None:
        """Write the events (`write_parts`: one `writev` call as a rule), then fsync, before
        returning."""
        if self._fd is None and self._closed:
            self._reopen()
        if self._fd is None:
            if self.locked:
                raise SessionLocked(f"{self.path.name} is {LOCKED}; this view is read-only")
            raise StorageError(f"{self.path.name}: {self.read_only_reason}", path=str(self.path))
        self._ensure_loaded()
        batch = list(events)
        parts = encode_parts(batch)
        with self._writing:
            self._append_parts(batch, parts, last)

    def _append_parts(self, batch: list[Event], parts: list[bytes], last: bool) -> None:
        self.check_current()
        if self._tail is not None:  # a torn tail is cut before anything lands after it
            self._repair_tail(stays=last)
        if self._aside or self._aside_spans:
            self._write_aside()
        fd = self._fd
        assert fd is not None  # (append_many found it open, and check_current kept it)
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            write_parts(fd, parts)
            os.fsync(fd)
        except BaseException as exc:
            # A failed or partial write must not leave half a line for the next append to
            # land on: cut the file back to where this batch began (when it took anything:
            # a read-only disk refuses the cut as it refused the write).
            try:
                if os.fstat(fd).st_size != start:
                    os.ftruncate(fd, start)
                    os.fsync(fd)
                    self._mtime = os.fstat(fd).st_mtime_ns  # its own change, not another's
            except OSError:
                log.error("%s: could not undo a failed append", self.path.name)
            if isinstance(exc, OSError):
                raise storage_error("write", self.path, exc) from None
            raise
        self.check_written(start, parts)  # replaced or deleted while written: not acknowledged
        assert self._size is not None
        self._size += sum(map(len, parts))
        self._but_renames += sum(1 for event in batch if not renamed(event))
        self._mtime = os.fstat(fd).st_mtime_ns
        if self._header is None and batch:
            self._header = batch[0]


def renamed(event: Event) -> bool:
    """Whether `event` is a rename's record: a `meta` record of a title alone."""
    return event.get("type") == "meta" and event.keys() <= RENAME_FIELDS


def read_events(path: Path) -> tuple[list[Event], LoadReport]:
    """Parse a whole transcript at once. A partial last line is skipped and reported."""
    reading = LinePass(path)
    events = list(reading)
    for problem in reading.report.problems:
        log.warning("%s: %s", path.name, problem)
    return events, reading.report
