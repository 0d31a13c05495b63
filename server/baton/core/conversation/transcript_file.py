"""The file a transcript holds: the writer's descriptor and lock, and whether it changed.

Why a transcript is read-only (another process writes it, it was opened as a view, it cannot
be written), and whether the file held is still the one at its path, of the size and mtime
last seen.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from baton.core.conversation.files import SecondName, identity, open_regular, storage_error
from baton.core.conversation.folders import linked_folder
from baton.core.conversation.writer_lock import LOCKED, open_writer, write_locked
from baton.core.errors import StorageError, TranscriptChanged

VIEW = "opened read-only"


class TranscriptFile:
    """The file behind a `Transcript` (transcript.py) and the writer's hold on it: the
    descriptor and its `flock`, or the reason there is none (`read_only_reason`); its
    identity, size and mtime as read and written, checked against the file at `path`."""

    def __init__(
        self, path: Path, fd: int | None, *, loaded: bool = False, reason: str | None = None
    ) -> None:
        self.path = path
        self._fd = fd
        # the bytes of the file this transcript has read and written; None until loaded
        self._size: int | None = 0 if loaded else None
        # its mtime as this transcript last read or wrote it (None: not known yet)
        self._mtime: int | None = None
        self._identity = identity(os.fstat(fd)) if fd is not None else None
        self._read: tuple[int, int] | None = self._identity  # the file read (a view's too)
        self._closed = False  # a writer closed by `close()`: the next append opens it again
        self.read_only_reason = reason if fd is None else None

    @property
    def read_only(self) -> bool:
        return self._fd is None and not self._closed

    @property
    def locked(self) -> bool:
        """Read-only because another process writes it, or it was opened as a view (not
        because it cannot be written)."""
        return self.read_only_reason in (LOCKED, VIEW)

    def check_current(self) -> None:
        """`TranscriptChanged` unless the file held is still the one at `path`, of the size
        and mtime this transcript last saw (cheap: three stats); `SecondName` when a hard
        link gave it another name since, `StorageError` when its folder is now a link
        (`linked_folder`). The transcript is closed then."""
        assert self._fd is not None
        try:
            on_disk = os.lstat(self.path)
        except FileNotFoundError:
            problem = "was deleted"
        except OSError as exc:  # its folder may no longer be searched: nothing is written
            raise storage_error("write", self.path, exc) from None
        else:
            held = os.fstat(self._fd)
            problem = "was replaced" if identity(on_disk) != identity(held) else ""
            problem = problem or self._change(held, self._identity)
            if not problem and held.st_nlink > 1:  # a hard link made since it was opened
                linked = SecondName(self.path, held.st_nlink)
                self.abandon(f"{linked.message}; it is served read-only")
                raise linked
        folder_link = linked_folder(self.path.parent)  # its folder moved out, a link left
        if folder_link:
            self.abandon(folder_link)
            raise StorageError(folder_link, path=str(self.path.parent))
        if not problem:
            return
        self.abandon(f"it {problem} by another program")
        raise TranscriptChanged(
            f"{self.path} {problem} by another program since Baton read it; nothing was "
            "written and the session is read again from the disk",
            path=str(self.path),
        )

    def check_written(self, start: int, parts: Sequence[bytes]) -> None:
        """After an append's fsync: `TranscriptChanged` when the file at `path` is no longer
        the one written (another program deleted it, or saved another in its place, while
        the append was written: the append went with the old file), unless the file there
        holds `parts` where they were written (a copy made after the write). Nothing is
        acknowledged then; the transcript is closed."""
        assert self._fd is not None
        try:
            on_disk = os.lstat(self.path)
        except FileNotFoundError:
            problem = "was deleted"
        except OSError:  # its folder can no longer be searched: the next check says so
            return
        else:
            if identity(on_disk) == identity(os.fstat(self._fd)) or self._holds(start, parts):
                return
            problem = "was replaced"
        self.abandon(f"it {problem} by another program")
        raise TranscriptChanged(
            f"{self.path} {problem} by another program while Baton wrote to it: what it "
            "wrote went with the old file, so nothing was acknowledged, and the session is "
            "read again from the disk",
            path=str(self.path),
        )

    def _holds(self, start: int, parts: Sequence[bytes]) -> bool:
        """Whether the file at `path` holds `parts` from offset `start` on."""
        try:
            fd = open_regular(self.path, os.O_RDONLY)
        except (OSError, StorageError):
            return False
        try:
            for part in parts:
                if os.pread(fd, len(part), start) != part:
                    return False
                start += len(part)
            return True
        except OSError:
            return False
        finally:
            os.close(fd)

    def moved_on(self) -> bool:
        """Whether the file at `path` is no longer the one this transcript read, or no
        longer of the size and mtime it saw: another process wrote, replaced, cut or saved
        over it while this one held no descriptor (cheap: one stat)."""
        if self._size is None:
            return False  # nothing read yet: whatever is read is the file's latest
        try:
            on_disk = os.lstat(self.path)
        except OSError:
            return True
        return bool(self._change(on_disk, self._identity))

    def unchanged_view(self) -> bool:
        """Whether this view of a file another process writes still shows all of it: that
        process still holds the file's lock, and the file is the one read, of the size and
        mtime read (a stat and the kernel's table of locks; False where there is no such
        table)."""
        if self.read_only_reason != LOCKED or self._read is None or self._size is None:
            return False
        try:
            on_disk = os.lstat(self.path)
        except OSError:
            return False
        if self._change(on_disk, self._read):
            return False
        return self._read in write_locked()

    def other_writer(self) -> tuple[int, int] | None:
        """The file (device, inode) this view read while another process holds its writer's
        lock, as this process last found; None for any other transcript. Once that file is
        no longer in the kernel's table of locks (`write_locked`), its writer let go."""
        if self.read_only_reason != LOCKED or self._fd is not None:
            return None
        return self._read

    def head(self, limit: int) -> bytes | None:
        """The first `limit` bytes of the file held for writing (None when none is held),
        read through its descriptor: the file whose lock is held, whatever is at `path`
        by now (another program may have saved a file of its own there since the open)."""
        return None if self._fd is None else os.pread(self._fd, limit, 0)

    def file_state(self) -> os.stat_result | None:
        """The `lstat` of the file at `path` while it is the one this transcript holds, at
        the size and mtime it last saw (so what this transcript read and wrote is all it
        holds); None when not, or when no file is held (a read-only view: another process
        may write it)."""
        if self._identity is None or self._size is None:
            return None
        try:
            on_disk = os.lstat(self.path)
        except OSError:
            return None
        if self._change(on_disk, self._identity):
            return None
        return on_disk

    def _change(self, st: os.stat_result, file: tuple[int, int] | None) -> str:
        """What another program did to the file `st` describes since this transcript last
        read or wrote `file` (its device and inode), "" for nothing: the one rule of every
        check that the file is still as this transcript left it (`check_current`,
        `moved_on`, `unchanged_view`, `file_state`). Another file there, another size, or
        the same size at another mtime (saved over itself in place)."""
        if identity(st) != file or st.st_nlink == 0:
            return "was replaced"
        if st.st_size < (self._size or 0):
            return "was truncated"
        if st.st_size > (self._size or 0):
            return "was written to"
        if self._mtime is not None and st.st_mtime_ns != self._mtime:
            return "was changed in place"  # saved over itself, of the same size
        return ""

    def _reopen(self) -> None:
        """The writer's descriptor and lock again, after `close()`, for the same file."""
        self._closed = False
        try:
            self._fd, self.read_only_reason = open_writer(self.path)
        except FileNotFoundError:
            self.read_only_reason = "it was deleted by another program"
            raise TranscriptChanged(
                f"{self.path} was deleted by another program; nothing was written",
                path=str(self.path),
            ) from None
        except OSError as exc:
            raise storage_error("open", self.path, exc) from None
        if self._fd is not None:
            self.check_current()

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            self._closed = True
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def abandon(self, reason: str) -> None:
        """Close for good: read-only from now on, because of `reason`."""
        self.close()
        self._closed = False
        self.read_only_reason = reason

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
