"""The data dir's folders: whether sessions can be kept in one (made private, 0700), and
why not, naming the path and the cause; a sessions folder that is a link is never used."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from baton.core.conversation.files import cause, replace_in, storage_error
from baton.core.errors import StorageError


def unwritable_cause(path: Path) -> str:
    """Why `path` (which `os.access` says cannot be written) cannot be, in the OS's words."""
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError as exc:
        return cause(exc)
    return os.strerror(errno.EROFS if read_only else errno.EACCES)


def linked_folder(folder: Path) -> str | None:
    """Why nothing is kept in `folder`, the data dir's sessions folder, when it is a
    symbolic link (what it leads to is outside the data dir, and would be written and made
    private, 0700, through it); None when it is not one. The data dir itself may be a link,
    or lie under one: it is where the settings say, followed to its end. `StorageError`
    naming the folder and the cause when it cannot be looked up (the data dir cannot be
    searched: `chmod a-x`), which nothing is read or written through either."""
    try:
        mode = os.lstat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise storage_error("read", folder, exc) from None
    if not stat.S_ISLNK(mode):
        return None
    return (
        f"{folder} is a symbolic link; Baton follows no link inside its data dir (make it "
        "a folder, or set the data dir to a folder of its own)"
    )


def write_problem(folder: Path) -> str | None:
    """Why no file can be created in `folder` (made with its parents as needed), naming
    the nearest path on the way that exists: '... is not a directory', '... cannot be
    written (cause)' or that `folder` is a link (`linked_folder`); None when one can.
    Nothing is created to find out."""
    linked = linked_folder(folder)
    if linked:
        return linked
    probe = _nearest(folder)
    if not probe.is_dir():
        return f"{probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} cannot be written ({unwritable_cause(probe)})"
    return None


def _nearest(path: Path) -> Path:
    """`path` if it exists, else the nearest folder above it that does: what a making of
    `path` with its parents meets first."""
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def access_problems(data_dir: Path, folder: Path) -> list[str]:
    """What Baton cannot do in `data_dir`, whose sessions folder is `folder`, one sentence
    each naming the path and the cause (nothing when it can read and write there). Nothing
    is created to find out."""
    try:
        linked = linked_folder(folder)
    except StorageError as exc:
        return [f"data dir {data_dir}: {exc.message}; sessions cannot be listed or kept"]
    if linked:
        return [f"data dir {data_dir}: {linked}; sessions cannot be kept"]
    probe = _nearest(folder)
    if not probe.is_dir():
        return [f"data dir {data_dir}: {probe} is not a directory; sessions cannot be kept"]
    if probe == folder and not os.access(folder, os.R_OK | os.X_OK):
        return [f"data dir {data_dir}: {folder} cannot be read (permission denied)"]
    if not os.access(probe, os.W_OK | os.X_OK):
        reason = unwritable_cause(probe)
        return [
            f"data dir {data_dir}: {probe} cannot be written ({reason}); sessions are "
            "served read-only and new ones cannot be created"
        ]
    return []


def open_folder(folder: Path) -> int:
    """A descriptor of `folder`, never through a link: the folder checked is the folder
    used, however another program swaps it meanwhile. `StorageError` in `linked_folder`'s
    words when it is a link; other failures are the OSError they are."""
    linked = linked_folder(folder)
    if linked:
        raise StorageError(linked, path=str(folder))
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        linked = linked_folder(folder) if exc.errno in (errno.ELOOP, errno.ENOTDIR) else None
        if linked:  # made a link since the check
            raise StorageError(linked, path=str(folder)) from None
        raise


def remove_beside(path: Path) -> bool:
    """Remove the regular file `path` beside the transcripts (a deleted session's draft),
    through their folder's descriptor (`open_folder`): whether it was there to remove.
    What is no regular file (a link, a FIFO, a folder another program put there) is left
    as it is, and so is all of a folder made a link (`StorageError`)."""
    folder = open_folder(path.parent)
    try:
        try:
            mode = os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(mode):
            return False
        os.unlink(path.name, dir_fd=folder)
        return True
    finally:
        os.close(folder)


def open_private_dir(path: Path) -> int:
    """A descriptor of the folder `path` (made with its parents as needed), made private
    through it (`open_folder`): no access for the group and others (0700 as made), the
    owner's bits left as they are. `StorageError` when it is a link, nothing made or changed,
    or cannot be made or opened."""
    try:
        if not path.is_symlink():
            path.mkdir(parents=True, exist_ok=True)
        fd = open_folder(path)
    except StorageError as exc:
        raise StorageError(
            f"could not create a session in {path}: {exc.message}", path=str(path)
        ) from None
    except OSError as exc:
        # a file where the folder should be: mkdir says "File exists", which sends a user
        # looking for a session file; say what is there
        problem = write_problem(path) if exc.errno == errno.EEXIST else None
        if problem:
            raise StorageError(
                f"could not create a session in {path}: {problem}", path=str(path)
            ) from None
        raise storage_error("create a session in", path, exc) from None
    try:
        # private: nothing for the group and others; the owner's bits are left as they
        # are (a folder made read-only stays so: a create there fails, as the start said)
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o077:
            os.fchmod(fd, mode & ~0o077)
    except OSError as exc:
        os.close(fd)
        raise storage_error("create a session in", path, exc) from None
    return fd


def replace_beside(path: Path, data: bytes) -> None:
    """`replace_file` for a file beside the transcripts (a compaction's draft, the session
    notes), through their folder's descriptor (`open_folder`): `StorageError` while it is
    a link (it became one while the server held the session), nothing written through it."""
    folder = open_folder(path.parent)
    try:
        replace_in(folder, path.name, data)
    finally:
        os.close(folder)
