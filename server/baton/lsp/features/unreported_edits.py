"""The edits the editor applied and has not reported yet: after `workspace/applyEdit` the
editor answers, and its didOpen / didChange for the file may come later (or, for a file it
never syncs, not at all). Until they do, the file's text in the editor is the one the
server's own edit made; a second edit of the file in the same reply is worked out on it,
not on the text before the first edit (which put its change on the wrong line of a closed
file, or sent the version of an open one the editor no longer had)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton.core.tools.host import current_text
from baton.core.workspace.editor_files import path_to_uri, uri_to_path

Document = tuple[str, int | None]  # an open document's text and version, as last reported


@dataclass(frozen=True)
class Unreported:
    """The editor's text of a file since the server's last edit of it (`text`), while what
    the server knows of the file is still what it knew when it sent that edit: the same
    report of the open document (`document`), or, not open, the same text on the disk
    (`disk`, None: no file)."""

    document: Document | None
    disk: str | None
    text: str


def _key(path: Path | str) -> str:
    found = uri_to_path(path_to_uri(path) if isinstance(path, Path) else path)
    return str(found) if found is not None else str(path)


def _disk(path: Path) -> str | bool | None:
    """The disk's text of `path`, None when it is missing, False when it cannot be read."""
    try:
        return current_text(path)
    except (OSError, UnicodeDecodeError):
        return False


class UnreportedEdits:
    def __init__(self) -> None:
        self._held: dict[str, Unreported] = {}
        self._reports: dict[str, int] = {}  # how many times the editor told each file

    def reports(self, path: Path) -> int:
        """A mark taken before an edit is sent: `applied` keeps nothing when the editor
        told the file since (it opened the file with the edit and the user closed it
        unsaved, before its answer came: its last word stands)."""
        return self._reports.get(_key(path), 0)

    def held(self, path: Path, document: Document | None) -> Unreported | None:
        """The edit applied to `path` and not reported yet, or None: none was, the editor
        has reported the file since, or its disk's text changed (the user, another
        program: their word stands)."""
        found = self._held.get(_key(path))
        if found is None or found.document != document:
            return None
        if document is None and _disk(path) != found.disk:
            return None
        return found

    def applied(self, path: Path, basis: Unreported, mark: int) -> None:
        """The editor applied an edit of `path`: it holds `basis.text` from now on, unless
        it told the file since `mark`."""
        key = _key(path)
        if self._reports.get(key, 0) == mark:
            self._held[key] = basis
        else:
            self._held.pop(key, None)

    def paths(self) -> list[Path]:
        """The files an edit was applied to and not reported yet (some since changed)."""
        return [Path(key) for key in self._held]

    def reported(self, uri: str) -> None:
        """The editor told the server the file's text (opened, changed or closed it)."""
        key = _key(uri)
        self._held.pop(key, None)
        self._reports[key] = self._reports.get(key, 0) + 1
