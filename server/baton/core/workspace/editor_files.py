"""Recently touched editor files: which files, when, and the live text of open documents."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

MAX_TRACKED = 256
# version control's own folders: never walked, read, searched, edited or restored
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
_DRIVE = re.compile(r"^/[A-Za-z]:")


def is_file_uri(text: str) -> bool:
    """Whether `text` is a `file:` URI (its scheme in any case: `FILE:///x` is one)."""
    return text[:5].lower() == "file:"


def uri_to_path(uri: str) -> Path | None:
    """The local path of a `file:` URI (percent-decoded); None for any other scheme."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        return None
    path = unquote(parts.path)
    if parts.netloc and parts.netloc.lower() != "localhost":
        path = f"//{parts.netloc}{path}"  # a UNC share
    elif _DRIVE.match(path):
        path = path[1:]  # file:///c:/x names the Windows path c:/x
    return Path(path) if path else None


def in_vcs_dir(path: Path) -> bool:
    """Whether `path` lies inside a version-control folder (`.git`, `.hg`, `.svn`)."""
    return any(part.lower() in VCS_DIRS for part in path.parts)


def path_problem(path: Path) -> str | None:
    """Why `path` cannot name a file Baton can restore or a tool can reach (a NUL byte, a
    lone surrogate, a name that is not UTF-8, a place inside `.git`), or None when it can."""
    if in_vcs_dir(path):
        name = next(part for part in path.parts if part.lower() in VCS_DIRS)
        return (
            f"it is inside {name}, the version control's own files (a remote URL there may "
            "carry a token): Baton never shows them to the model"
        )
    text = str(path)
    if "\x00" in text:
        return "its URI names no usable path (it holds a NUL byte)"
    try:
        text.encode("utf-8")  # what cannot be UTF-8 cannot reach the transcript
    except UnicodeError:
        return "its URI names no usable path (it is not valid UTF-8)"
    return None


def folder_labels(folders: Sequence[Path]) -> list[str]:
    """How the tools name each folder of a workspace of several: its name, with as many of
    its parents in front as tell it from another folder of the same name (`one/app` and
    `two/app`), as an editor tells such folders apart."""
    parts = [Path(folder).parts for folder in folders]
    labels: list[str] = []
    for i, own in enumerate(parts):
        k = 1
        while k < len(own) and any(
            j != i and other[-k:] == own[-k:] for j, other in enumerate(parts)
        ):
            k += 1
        labels.append(Path(*own[-k:]).as_posix() if own else ".")
    return labels


def folder_candidates(given: Path, folders: Sequence[Path]) -> list[Path]:
    """Where the relative path `given` may be, in order. With several folders the tools
    show a path with its folder's label in front (`back/src/x.py`, `two/app/x.py`): the
    folder of that label first, then each folder as if the path were its own."""
    named: list[Path] = []
    if len(folders) > 1:
        for folder, label in zip(folders, folder_labels(folders), strict=True):
            head = Path(label).parts
            if given.parts[: len(head)] == head:
                named.append(Path(folder) / Path(*given.parts[len(head) :]))
    return named + [Path(f) / given for f in folders]


def path_to_uri(path: Path | str) -> str:
    """The `file:` URI of a path (made absolute, percent-encoded)."""
    return Path(path).absolute().as_uri()


@dataclass
class TrackedFile:
    uri: str
    path: Path
    text: str | None = None  # the editor's current text while the document is open
    version: int | None = None
    is_open: bool = False
    seq: int = 0  # orders touches; wall time can go backwards
    touched_at: float = 0.0


class EditorFiles:
    """Files the editor opened, changed, saved or focused, most recent first.

    Only `file:` URIs are tracked. Open documents keep their current text (which may be
    unsaved); closed ones are read from disk when they are restored. Closing a document
    is not a touch: it keeps its place in the order. At most `max_tracked` closed files
    are kept besides the open documents, all of which are.
    """

    def __init__(self, clock: Callable[[], float] = time.time, max_tracked: int = MAX_TRACKED):
        self._clock = clock
        self._max = max_tracked
        self._seq = 0
        self._files: dict[str, TrackedFile] = {}
        self.active: str | None = None

    def _touch(self, uri: str) -> TrackedFile | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        key = str(path)
        tracked = self._files.get(key)
        if tracked is None:
            tracked = self._files[key] = TrackedFile(uri=uri, path=path)
        self._seq += 1
        tracked.seq = self._seq
        tracked.touched_at = self._clock()
        self._forget_oldest(tracked)
        return tracked

    def _find(self, uri: str) -> TrackedFile | None:
        path = uri_to_path(uri)
        return self._files.get(str(path)) if path is not None else None

    def _forget_oldest(self, touched: TrackedFile) -> None:
        """Closed files past the bound, the least recently touched first (never `touched`,
        still being made). An open document is never dropped: its text is what the tools
        read and edit, and the editor bounds how many it has open (the protocol's own
        copies of them are kept anyway); one dropped was read from the disk, and an edit
        worked out on the disk's text went to the editor's other text."""
        if len(self._files) <= self._max:
            return
        closed = [f for f in self._files.values() if not f.is_open and f is not touched]
        closed.sort(key=lambda f: f.seq)
        for victim in closed[: len(self._files) - self._max]:
            del self._files[str(victim.path)]

    def opened(self, uri: str, text: str, version: int | None = None) -> None:
        tracked = self._touch(uri)
        if tracked is not None:
            tracked.uri, tracked.text, tracked.version, tracked.is_open = uri, text, version, True

    def changed(self, uri: str, text: str, version: int | None = None) -> None:
        current = self._find(uri)
        if (
            current is not None
            and version is not None
            and current.version is not None
            and version < current.version
        ):
            return  # a late, stale change must not overwrite newer text
        tracked = self._touch(uri)
        if tracked is not None:
            tracked.text, tracked.version, tracked.is_open = text, version, True

    def saved(self, uri: str, text: str | None = None) -> None:
        tracked = self._touch(uri)
        if tracked is not None and text is not None and tracked.is_open:
            tracked.text = text

    def closed(self, uri: str) -> None:
        tracked = self._find(uri)
        if tracked is None:
            return
        if path_problem(tracked.path) is not None:
            del self._files[str(tracked.path)]  # it can never be read from disk: forget it
            return
        tracked.is_open, tracked.text, tracked.version = False, None, None

    def focused(self, uri: str | None) -> None:
        if uri is None or uri_to_path(uri) is None:
            self.active = None
            return
        self.active = uri
        self._touch(uri)

    def get(self, uri: str) -> TrackedFile | None:
        return self._find(uri)

    def recent(self) -> list[TrackedFile]:
        """Tracked files, most recently touched first."""
        return sorted(self._files.values(), key=lambda f: f.seq, reverse=True)

    def __len__(self) -> int:
        return len(self._files)
