"""Where the tools may look: paths contained in the workspace folders by the working set's
rules (symlinks resolved, credential files refused), and the editor's lines of a text."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from baton.core.compaction.working_set.restore import excluded
from baton.core.compaction.working_set.visible import resolve_path
from baton.core.workspace.editor_files import (
    folder_candidates,
    folder_labels,
    in_vcs_dir,
    is_file_uri,
    path_problem,
    uri_to_path,
)

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, *, keepends: bool = False) -> list[str]:
    """The lines of `text` as an editor numbers them: broken at \\n, \\r\\n and \\r only
    (`str.splitlines` also breaks at form feeds and Unicode line separators, so its
    numbers drift from the editor's and a line shown split cannot be matched). A UTF-8 byte
    order mark first is left out: the file's encoding to an editor, no text of line 1."""
    lines: list[str] = _LINE.findall(text.removeprefix("\ufeff"))
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


class ToolError(Exception):
    """What a call could not do, in the words the model reads (the result is an error)."""


class Unreadable(ToolError):
    """A file the system would not let the server read (`why`: its error, in words)."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class Located:
    """A contained path: `real` (symlinks resolved, what is opened), `path` (the same file
    under the folder as the editor names it), `shown` (relative to its folder), `named`
    (the path as given, its links kept: the editor may have the file open by that name)."""

    real: Path
    path: Path
    shown: str
    folder: Path
    named: Path | None = None


@dataclass
class Workspace:
    folders: Sequence[Path]
    exclude: Sequence[str] = ()
    _resolved: list[tuple[Path, Path]] = field(default_factory=list, init=False)
    _labels: list[str] = field(default_factory=list, init=False)
    # folders inside `.git` (an editor opened on it, or on a link to it): none of the tools'
    _version_control: list[Path] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        for folder in self.folders:
            real = resolve_path(Path(folder))
            if real is not None and (in_vcs_dir(real) or in_vcs_dir(Path(folder))):
                # the paths inside are relative to it, with no `.git` left to refuse them
                self._version_control.append(Path(folder))
                continue
            # a folder given twice (or by a link to it) is one: the first name stands
            if real is not None and all(real != seen for _, seen in self._resolved):
                self._resolved.append((Path(folder), real))
        self._labels = folder_labels([given for given, _ in self._resolved])

    @property
    def roots(self) -> list[Located]:
        """The folders; each `shown` as the tools name it: `.` alone, else its label."""
        several = len(self._resolved) > 1
        return [
            Located(real, given, label if several else ".", given)
            for (given, real), label in zip(self._resolved, self._labels, strict=True)
        ]

    def no_folder(self) -> ToolError:
        """Why the tools have no folder to work in: none is open, or each is inside `.git`."""
        if not self._version_control:
            return ToolError("no workspace folder is open: the tools work only inside one")
        named = self._version_control[0]
        problem = path_problem(resolve_path(named) or named) or path_problem(named)
        return ToolError(f"the workspace folder {str(named)!r} cannot be used: {problem}")

    @property
    def only_version_control(self) -> bool:
        """Whether every folder given is inside `.git` (the tools then have none)."""
        return bool(self._version_control) and not self._resolved

    def locate(self, raw: object, *, must_exist: bool = True, what: str = "path") -> Located:
        """The contained file or folder `raw` names (relative: to the folder whose name it
        starts with when there are several, as the tools show paths, then to each folder
        in order); ToolError naming why not."""
        if not self._resolved:
            raise self.no_folder()
        if not isinstance(raw, str) or not raw.strip():
            raise ToolError(f"{what} must be a non-empty string")
        text = raw.strip()  # spaces the model left around a path
        if text != raw:
            # unless a name holds them: `notes ` is not `notes`, which it read and edited
            with contextlib.suppress(ToolError):
                return self._locate(raw, True, what)
        return self._locate(text, must_exist, what)

    def _locate(self, text: str, must_exist: bool, what: str) -> Located:
        given = uri_to_path(text) if is_file_uri(text) else Path(text)
        if given is None:
            raise ToolError(f"{what} {text!r} is not a usable file URI")
        problem = path_problem(given)
        if problem is not None:
            raise ToolError(f"{what} {text!r}: {problem}")
        if given.is_absolute():
            candidates = [given]
        else:
            candidates = folder_candidates(given, [folder for folder, _ in self._resolved])
        found: Located | None = None
        for candidate in candidates:
            located = self._contain(candidate, text)
            if located is None:
                continue
            if found is None:
                found = located
            if exists(located.real, text):
                return located
        if found is None:
            if any(resolve_path(candidate) is None for candidate in candidates):
                raise ToolError(f"{text!r} cannot be reached: a link on its way leads to itself")
            raise ToolError(f"{text!r} is outside the workspace folders")
        shared = self._shared_name(given)
        if must_exist or shared:
            raise ToolError(f"{text!r} does not exist{shared or glob_hint(text)}")
        return found

    def _shared_name(self, given: Path) -> str:
        """Why a relative path that starts with a name two folders share reaches neither
        (they are shown apart: `one/app`, `two/app`); "" when it does not."""
        if given.is_absolute() or not given.parts or len(self._resolved) < 2:
            return ""
        head = given.parts[0]
        labels = [
            label
            for (folder, _), label in zip(self._resolved, self._labels, strict=True)
            if folder.name == head and label != head
        ]
        if not labels:
            return ""
        return (
            f" ({len(labels)} workspace folders are named {head}: start the path with "
            f"{', '.join(labels[:-1])} or {labels[-1]})"
        )

    def _contain(self, candidate: Path, text: str) -> Located | None:
        real = resolve_path(candidate)
        if real is None:
            return None
        for (given, folder), label in zip(self._resolved, self._labels, strict=True):
            if not real.is_relative_to(folder):
                continue
            relative = real.relative_to(folder)
            problem = path_problem(relative)  # a link into .git, or a path through one
            if problem is None and candidate.is_relative_to(given):
                problem = path_problem(candidate.relative_to(given))
            if problem is not None:
                raise ToolError(f"{text!r}: {problem}")
            if excluded(real, folder, self.exclude) or (
                candidate.is_relative_to(given) and excluded(candidate, given, self.exclude)
            ):
                raise ToolError(
                    f"{text!r} may hold credentials (it matches restore.exclude): "
                    "Baton never shows such files to the model"
                )
            shown = relative.as_posix() or "."
            if len(self._resolved) > 1:  # as the walks show it
                shown = label if shown == "." else f"{label}/{shown}"
            # the name as given, when it is this file (`sub/../x.py` through a link `sub`
            # is not the `x.py` beside `sub`)
            named = Path(os.path.normpath(candidate))
            same = resolve_path(named) == real
            return Located(real, given / relative, shown, given, named if same else None)
        return None

    def shown(self, real: Path) -> str | None:
        """`real` relative to its folder, when it is inside one and not excluded."""
        for _, folder in self._resolved:
            if real.is_relative_to(folder):
                if excluded(real, folder, self.exclude) or in_vcs_dir(real.relative_to(folder)):
                    return None
                return real.relative_to(folder).as_posix() or "."
        return None


def exists(path: Path, text: str) -> bool:
    """Whether `path` exists; ToolError when it cannot be looked at (a name too long, a
    folder the server may not enter), which `Path.exists` raises, or hides in newer Pythons."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise ToolError(f"{text!r} cannot be reached ({why(exc)})") from None
    return True


def glob_hint(path: str) -> str:
    """What a path that does not exist is, when it is a glob (`src/*.py`): "" otherwise."""
    if "*" in path or "?" in path:  # (`[id].tsx` is a name as often as a glob)
        return " (it is a glob: find_files lists the files it matches)"
    return ""


def why(exc: OSError) -> str:
    """An OS error in words (its strerror, else its kind)."""
    return exc.strerror or type(exc).__name__
