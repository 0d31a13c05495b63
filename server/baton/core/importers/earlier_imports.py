"""What earlier imports of a file say about importing it again: the live sessions made from
it, whether the file changed since (the bytes their import read and a fingerprint of their
ends, noted in their headers), and the note that an import is another copy."""

from __future__ import annotations

from pathlib import Path

from baton.core.conversation.files import path_text
from baton.core.conversation.listing import Summary
from baton.core.conversation.meta_records import read_imported_fingerprint
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers.read_fingerprint import file_fingerprint


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
        return f"the file changed since ({known[-1]:,} bytes then, {now:,} now)"
    prints = [mark for size, mark in noted if size == now]
    if None in prints:
        return None
    mark = file_fingerprint(path, now)
    if mark is None or mark in prints:  # unreadable now: nothing known, as when stat fails
        return None
    return f"the file changed since (other content of the same {now:,} bytes)"


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
