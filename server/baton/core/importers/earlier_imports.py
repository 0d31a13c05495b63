"""What earlier imports of a file say about importing it again: the live sessions made from
it, whether the file changed since (the bytes their import read and a fingerprint of their
ends, noted in their headers), the note that an import is another copy, and the claim that
makes two imports of one file at once go one after the other (`ImportClaim`)."""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from baton.core.conversation.files import open_read, path_text
from baton.core.conversation.folders import open_private_dir
from baton.core.conversation.listing import Summary
from baton.core.conversation.meta_records import read_imported_fingerprint
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code_json import loads
from baton.core.importers.read_fingerprint import file_fingerprint

CUT_LINE_MAX = 64 << 20  # bytes past what an import read looked at for a line cut short


class ImportClaim:
    """A data dir's claim on importing one file, held from the look for the file's earlier
    imports until its new session is in place (or nothing stays): two imports of the file
    at once (two servers, a server and `baton import`, two requests) go one after the
    other, so the second sees the first's session, as if it came later. A lock (flock) on
    a small file of the sessions folder named by the file's path, removed as it is let go
    (a claim taken on a file removed meanwhile is taken again on the file's new copy); the
    system lets the lock go when its process ends, however it ends, and the next claim of
    the file takes over the file it left."""

    def __init__(self, path: Path, store: SessionStore) -> None:
        key = hashlib.blake2b(path_text(path.resolve()).encode(), digest_size=12).hexdigest()
        self.name = f".import-{key}.lock"
        self.folder = store.sessions_dir
        self.held: tuple[int, int] | None = None  # the folder's descriptor and the file's

    def take(self, *, wait: bool) -> bool:
        """True once the claim is held; False when another import holds it and `wait` is
        False (with `wait`, the call returns once that import ends). `StorageError` when
        the sessions folder cannot be made or opened, as for the import itself."""
        folder = open_private_dir(self.folder)
        try:
            while True:
                flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open(self.name, flags, 0o600, dir_fd=folder)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                    if self._named(fd, folder):
                        self.held = (folder, fd)
                        return True
                except BlockingIOError:
                    os.close(fd)
                    os.close(folder)
                    return False
                except BaseException:
                    os.close(fd)
                    raise
                os.close(fd)  # removed as its holder let it go: claimed on a file of no name
        except BaseException:
            os.close(folder)
            raise

    def _named(self, fd: int, folder: int) -> bool:
        """Whether the file locked as `fd` is the one under the claim's name still."""
        try:
            named = os.stat(self.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def release(self) -> None:
        """The claim let go, its file removed while it is held (nothing stays of it)."""
        if self.held is None:
            return
        folder, fd = self.held
        self.held = None
        try:
            os.unlink(self.name, dir_fd=folder)
        except OSError:
            pass  # left, empty: the next claim of the file takes it over
        finally:
            os.close(fd)  # the lock goes with the last descriptor of it
            os.close(folder)


def imports_of(path: Path, store: SessionStore) -> list[Session | Summary]:
    """The live sessions of `store` imported from `path` (not compacted copies of it)."""
    return imports_among(path, store.list())


def imports_among(path: Path, sessions: list[Session | Summary]) -> list[Session | Summary]:
    """Those of `sessions` imported from `path` (not compacted copies of it): each path
    resolved, a few system calls each (in a worker thread, for the server)."""
    target = path_text(path.resolve())  # as the import wrote it
    return [
        s
        for s in sessions
        if s.imported_from
        and path_text(Path(s.imported_from).resolve()) == target
        and not (s.header or {}).get("compactedFrom")
    ]


def changed_since(path: Path, earlier: list[Session | Summary]) -> str | None:
    """How the file changed since it was imported as `earlier`, or None when one of them
    is the file as it is now: its size, and the fingerprint of its ends (an import before
    the fingerprint was noted is taken at its size; None too when an import noted no
    size)."""
    noted = [_noted(s) for s in earlier]
    known = [size for size, _ in noted if isinstance(size, int)]
    try:
        now = path.stat().st_size
    except OSError:
        return None
    if not known or len(known) < len(noted):
        return None
    if now not in known:
        if any(_cut_line_past(path, size, mark, now) for size, mark in noted):
            return None
        return f"the file changed since ({known[-1]:,} bytes then, {now:,} now)"
    prints = [mark for size, mark in noted if size == now]
    if None in prints:
        return None
    mark = file_fingerprint(path, now)
    if mark is None or mark in prints:  # unreadable now: nothing known, as when stat fails
        return None
    return f"the file changed since (other content of the same {now:,} bytes)"


def _cut_line_past(path: Path, size: object, mark: str | None, now: int) -> bool:
    """Whether the file is what an import read as `size` bytes of fingerprint `mark`,
    followed by a line an import leaves out as it is now: no line end in it, and not a
    record (Claude Code writes it still, or stopped as it wrote it)."""
    if not isinstance(size, int) or mark is None or not size < now <= size + CUT_LINE_MAX:
        return False
    try:
        with open_read(path) as handle:
            handle.seek(size)
            rest = handle.read(now - size)
    except OSError:
        return False
    if len(rest) != now - size or b"\n" in rest or rest.isspace():
        return False
    try:
        loads(rest)
    except ValueError:  # not a record: left out, as the import left it
        return file_fingerprint(path, size) == mark
    return False


def _noted(earlier: Session | Summary) -> tuple[object, str | None]:
    """The size and the fingerprint of what an import read, as its transcript noted them."""
    if isinstance(earlier, Session):
        return earlier.imported_size, earlier.imported_fingerprint
    header = earlier.header or {}
    return header.get("importedSize"), read_imported_fingerprint(
        header.get("importedFingerprint"), None
    )


def another_copy(earlier: list[Session | Summary]) -> str:
    """The note of an import of a file imported before (as `earlier`)."""
    names = ", ".join(s.session_id for s in earlier)
    return f"another copy: this file was imported before as {names}"
