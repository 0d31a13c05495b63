"""What earlier imports of a file say about importing it again: the live sessions made from
it, whether the file changed since (the bytes their import read, noted in their headers),
and the note that an import is another copy."""

from __future__ import annotations

from pathlib import Path

from baton.core.conversation.files import path_text
from baton.core.conversation.listing import Summary
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore


def imports_of(path: Path, store: SessionStore) -> list[Session | Summary]:
    """The live sessions of `store` imported from `path` (not compacted copies of it)."""
    target = path_text(path.resolve())  # as the import wrote it
    return [
        s
        for s in store.list()
        if s.imported_from
        and path_text(Path(s.imported_from).resolve()) == target
        and not (s.header or {}).get("compactedFrom")
    ]


def changed_since(path: Path, earlier: list[Session | Summary]) -> str | None:
    """How the file changed since it was imported as `earlier`, or None when one of them
    is the file as it is now (or their import did not note its size)."""
    sizes = [
        s.imported_size if isinstance(s, Session) else (s.header or {}).get("importedSize")
        for s in earlier
    ]
    known = [size for size in sizes if isinstance(size, int)]
    try:
        now = path.stat().st_size
    except OSError:
        return None
    if not known or len(known) < len(sizes) or now in known:
        return None
    return f"the file changed since ({known[-1]:,} bytes then, {now:,} now)"


def another_copy(earlier: list[Session | Summary]) -> str:
    """The note of an import of a file imported before (as `earlier`)."""
    names = ", ".join(s.session_id for s in earlier)
    return f"another copy: this file was imported before as {names}"
