"""The data dir's files: opened only as regular files (never through a link, never blocking
on a FIFO), written in full and synced, and their failures told with the path and cause."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from baton.core.errors import StorageError

# what a file that cannot be written because of where it is (not a bug) fails with
UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
IOV_MAX = os.sysconf("SC_IOV_MAX") if "SC_IOV_MAX" in os.sysconf_names else 16  # writev's limit


def path_text(path: Path | str) -> str:
    """`path` as text a transcript can hold: a byte of its name that is not UTF-8 (which
    Python keeps as a lone surrogate, and no JSON line can be written with) shows as \\xNN."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for an error or a listing."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def not_regular(path: Path | str, mode: int, *, write: bool = False) -> str:
    """Why the file at `path`, of `mode`, is refused: read, or written when `write`."""
    if write:
        return f"{path} is {kind_of(mode)}; Baton writes only regular files, never through a link"
    return f"{path} is {kind_of(mode)}; Baton reads only regular files and never follows a link"


class SecondName(StorageError):
    """A file of the data dir that a hard link gives another name, which may be outside
    the data dir: it is read, never written."""

    def __init__(self, path: Path | str, links: int) -> None:
        super().__init__(
            f"{path} has {links} names (hard links); Baton writes only a file with one "
            "name, as another could be outside the data dir",
            path=str(path),
        )


def open_regular(
    path: Path | str, flags: int, mode: int = 0o600, *, dir_fd: int | None = None
) -> int:
    """`path` opened with `flags`, only if it is a regular file: a link is never followed
    and a FIFO never waited on (`StorageError` for either, or anything else that is not a
    regular file; its words say whether a read or a write was refused), and for a write
    only a file with one name (`SecondName` for one a hard link gives another). Other
    failures are the OSError they are. With `dir_fd`, `path` is a name in that folder."""
    write = bool(flags & (os.O_WRONLY | os.O_RDWR))
    try:
        fd = os.open(
            path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd
        )
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            try:
                found = os.lstat(path, dir_fd=dir_fd).st_mode
            except OSError:
                raise exc from None
            raise StorageError(not_regular(path, found, write=write), path=str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StorageError(not_regular(path, st.st_mode, write=write), path=str(path))
        if st.st_nlink > 1 and write:
            raise SecondName(path, st.st_nlink)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """All of `data`, however many writes it takes; a write that takes nothing is a full
    disk (ENOSPC), never a silent short write."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def write_parts(fd: int, parts: Sequence[bytes]) -> None:
    """All of `parts`, in order, as one buffer of them joined would be written, without
    joining them (`writev`, at most IOV_MAX parts a call); a call may take part of what it
    is given, and the rest follows; a call that takes nothing is a full disk (ENOSPC).
    The parts go to `writev` as they are: only the part a call took in part is sliced (a
    view of its rest), not every part (an import writes two for each of its records)."""
    if b"" in parts:
        parts = [part for part in parts if part]
    at, taken = 0, 0  # the next part to write, and how much of it a call took already
    while at < len(parts):
        given: Sequence[bytes | memoryview] = parts[at : at + IOV_MAX]
        if taken:
            given = [memoryview(given[0])[taken:], *given[1:]]
        written = os.writev(fd, given)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if written == sum(map(len, given)):  # all it was given, as a rule
            at, taken = at + len(given), 0
            continue
        taken += written  # counted from the start of parts[at]
        while taken >= len(parts[at]):  # the parts taken whole
            taken -= len(parts[at])
            at += 1


def sync_dir(path: Path) -> None:
    """fsync a directory, so that a file just created in it survives a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        sync_folder(fd)
    finally:
        os.close(fd)


def sync_folder(fd: int) -> None:
    """fsync the directory open as `fd`. A file system that cannot sync a folder (some
    network and FUSE ones: EINVAL, EOPNOTSUPP) is left at the files' own syncs, as SQLite
    does; any other failure is raised."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
            raise


def cause(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class NotRegularFile(OSError):
    """A file opened to be read, a link followed, that is no regular file (a FIFO, a
    device, a folder), told in an OSError's words."""

    def __init__(self, path: Path | str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"{kind_of(mode)}, not a regular file", os.fspath(path))
        self.mode = mode


def open_read(path: Path | str, buffering: int = -1) -> BinaryIO:
    """`path` (a link followed) open for reading, only if the file opened is a regular one:
    its type is that of the file opened, not of the name before (another program may put a
    FIFO in a checked file's place), and a FIFO is never waited on (`NotRegularFile`, as
    for a socket, a device, a folder). Other failures are the OSError they are."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: a socket, told by its kind
            raise
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise exc from None
        raise NotRegularFile(path, mode) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb", buffering=buffering)


def read_text_file(path: Path, what: str, limit: int) -> str:
    """The UTF-8 text of the regular file at `path` (a link followed), or ValueError saying
    in a few words why it cannot be `what` ('a settings file'): no such file, a folder, a
    FIFO or a device (never waited on), not UTF-8 text, longer than `limit` bytes."""
    try:
        with open_read(path) as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise ValueError("no such file") from None
    except NotRegularFile as exc:
        raise ValueError(f"{kind_of(exc.mode)}, not {what}") from None
    except OSError as exc:
        raise ValueError(cause(exc)) from None
    if len(data) > limit:
        raise ValueError(f"longer than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def exists(path: Path) -> bool:
    """Whether there is a file at `path`; `StorageError` naming it and the cause when that
    cannot be told (a folder on the way that may not be searched), never "no session"."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise storage_error("read", path, exc) from None
    return True


def storage_error(doing: str, path: Path, exc: OSError) -> StorageError:
    """`StorageError` saying what could not be done, where, and why."""
    return StorageError(f"could not {doing} {path}: {cause(exc)}", path=str(path))


def replace_file(path: Path, data: bytes, mode: int = 0o600) -> None:
    """`path` replaced whole by `data` (with `mode`): written beside it under a unique name,
    synced, then renamed over it, so a reader sees the old file or the new one, never a
    part. The OSError of a failure is raised, with nothing left behind."""
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        replace_in(folder, path.name, data, mode)
    finally:
        os.close(folder)


def replace_in(folder: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """`replace_file` of the file `name` in the folder open as `folder`."""
    temporary = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600, dir_fd=folder)
    try:
        try:
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def read_small(path: Path, limit: int) -> bytes | None:
    """A small file of the data dir read whole, only if it is a regular file of at most
    `limit` bytes (never through a link); None when it is missing. StorageError for what
    is no regular file or is larger, the OSError of a read that fails."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise StorageError(f"{path} is larger than {limit:,} bytes; it is not read")
    return data


def identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino
