"""The append-only JSONL transcript: durable appends, one writer per file, torn-line recovery."""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from baton.core.conversation.transcript_read import Event as Event  # re-exported: the event type
from baton.core.conversation.transcript_read import LinePass, LoadReport
from baton.core.errors import InvalidParams, SessionLocked, TranscriptError

log = logging.getLogger(__name__)


def unwritable(value: Any, where: str = "") -> str | None:
    """Where in `value` a string cannot be written as UTF-8 (a lone surrogate such as
    "\\ud800"), as a JSON path; None when all of it can."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "a string"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = unwritable(key, f"{where}.{key!r} (a key)") or unwritable(
                item, f"{where}.{key}"
            )
            if found:
                return found
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            found = unwritable(item, f"{where}[{n}]")
            if found:
                return found
    return None


def check_writable(value: Any, what: str) -> None:
    """`invalid_params` when some string in `value` cannot be written as UTF-8."""
    found = unwritable(value)
    if found is not None:
        raise InvalidParams(
            f"{what} holds text that cannot be written as UTF-8 (a lone surrogate) at "
            f"{found.lstrip('.') or 'its value'}"
        )


def _encode(events: Iterable[Event]) -> bytes:
    batch = list(events)
    payload = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in batch)
    try:
        return payload.encode("utf-8")
    except UnicodeEncodeError:
        # Only now walk the events, to say where: the walk costs more than the encoding,
        # and a compaction's boundary record names thousands of message ids.
        check_writable(batch, "the record")
        raise InvalidParams("the record holds text that cannot be written as UTF-8") from None


def _ensure_private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)


class Transcript:
    """One session's event log. Appends are acknowledged only after flush + fsync.

    The writer holds an exclusive, non-blocking `flock` on the file for as long as it is
    open; a second process that opens the same file gets a read-only transcript.

    The events are not kept in memory: `events()` streams them from the file. The first
    complete read is the load (it fills `report`, makes the file end on a newline and keeps
    unreadable lines aside); every later read sees the same lines, since the file is only
    ever appended to, plus this transcript's own appends.
    """

    def __init__(self, path: Path, fd: int | None, *, loaded: bool = False) -> None:
        self.path = path
        self._fd = fd
        self._report = LoadReport()
        self._header: Event | None = None
        # the bytes of the file this transcript has read and written; None until loaded
        self._size: int | None = 0 if loaded else None

    @property
    def read_only(self) -> bool:
        return self._fd is None

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

    @classmethod
    def create(cls, path: Path, header: Event) -> Transcript:
        """A new transcript whose first line is `header`; fails if the file exists.

        A create that fails (a header that cannot be written, a full disk) leaves no
        file behind and holds no lock."""
        _encode([header])  # invalid_params before anything touches the disk
        _ensure_private_dir(path.parent)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        transcript = cls(path, fd, loaded=True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            transcript.append(header)
        except BaseException:
            transcript._fd = None
            try:
                path.unlink()
            finally:
                os.close(fd)
            raise
        return transcript

    @classmethod
    def open(cls, path: Path, *, writable: bool = True) -> Transcript:
        """Open an existing transcript, taking the writer's lock when `writable` and it is
        free; its events are read by `events()` (or on the first use of `report`)."""
        if not path.exists():
            raise TranscriptError(f"no transcript at {path}")
        fd: int | None = None
        if writable:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                fd = None
                log.info("%s is locked by another process; opening read-only", path.name)
        return cls(path, fd)

    def events(self) -> Iterator[Event]:
        """Every event in order, read from the file one line at a time."""
        if self._size is None:
            yield from self._load()
        else:
            yield from LinePass(self.path, self._size)

    def _load(self) -> Iterator[Event]:
        reading = LinePass(self.path)
        try:
            for event in reading:
                if self._header is None:
                    self._header = event
                yield event
            size = reading.end
            if self._fd is not None and reading.tail is not None:
                size = _repair_tail(self._fd, self.path, size, reading.tail)
        except OSError:
            self.close()  # a file that cannot be read is not held locked
            raise
        self._report = reading.report
        self._size = size
        for problem in self._report.problems:
            log.warning("%s: %s", self.path.name, problem)
        self.keep_aside(self._report.bad_raw)

    def _ensure_loaded(self) -> None:
        if self._size is None:
            for _ in self._load():
                pass

    @property
    def aside_path(self) -> Path:
        return self.path.with_suffix(self.path.suffix + ".bad")

    def keep_aside(self, lines: Iterable[bytes]) -> None:
        """Copy unreadable lines beside the transcript (`.bad`), each once, so that what
        a session could not load is never lost, whatever later happens to the file. The
        transcript itself keeps them (it is only ever appended to). Only the writer does
        this; a failure to do it is logged, never fatal."""
        wanted = [line.rstrip(b"\n") for line in lines]
        if self._fd is None or not wanted:
            return
        try:
            have = (
                set(self.aside_path.read_bytes().split(b"\n"))
                if self.aside_path.exists()
                else set()
            )
            new = [line for line in dict.fromkeys(wanted) if line not in have]
            if not new:
                return
            fd = os.open(self.aside_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, b"".join(line + b"\n" for line in new))
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            log.error("%s: could not keep unreadable lines aside: %s", self.path.name, exc)

    def append(self, event: Event) -> None:
        self.append_many([event])

    def append_many(self, events: Iterable[Event]) -> None:
        """Write the events in one `write` call, then fsync, before returning."""
        if self._fd is None:
            raise SessionLocked(
                f"{self.path.name} is open for writing in another Baton process; "
                "this view is read-only",
            )
        self._ensure_loaded()  # the load repairs a torn tail before anything lands after it
        batch = list(events)
        data = _encode(batch)
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            os.fsync(self._fd)
        except BaseException:
            # A failed or partial write must not leave half a line for the next append to
            # land on: cut the file back to where this batch began.
            try:
                os.ftruncate(self._fd, start)
                os.fsync(self._fd)
            except OSError:
                log.error("%s: could not undo a failed append", self.path.name)
            raise
        assert self._size is not None
        self._size += len(data)
        if self._header is None and batch:
            self._header = batch[0]

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_events(path: Path) -> tuple[list[Event], LoadReport]:
    """Parse a whole transcript at once. A partial last line is skipped and reported."""
    reading = LinePass(path)
    events = list(reading)
    for problem in reading.report.problems:
        log.warning("%s: %s", path.name, problem)
    return events, reading.report


def _repair_tail(fd: int, path: Path, size: int, tail: bytes) -> int:
    """Make the file (`size` bytes, ending in `tail`, a last line without its newline) end
    on a newline so the next append starts a fresh line; the file's new size.

    A torn last line is moved beside the transcript (`.torn`), so nothing is lost; a
    complete last object that only lacks its newline gets one.
    """
    keep = size - len(tail)
    try:
        json.loads(tail)
    except (json.JSONDecodeError, UnicodeDecodeError):
        torn_fd = os.open(
            path.with_suffix(path.suffix + ".torn"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
        )
        try:
            os.write(torn_fd, tail + b"\n")
        finally:
            os.close(torn_fd)
        os.ftruncate(fd, keep)
        size = keep
    else:
        os.write(fd, b"\n")
        size += 1
    os.fsync(fd)
    return size
