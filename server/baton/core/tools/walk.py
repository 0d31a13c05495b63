"""The workspace's files, walked once per call: `.gitignore` files (nested ones too, the
deepest that speaks about a path deciding, as git does) and `.git` honoured, symlinks
that leave the folders skipped, the walk bounded. Files `restore.exclude` names are left
to the callers to drop (`Workspace.shown`) among what they keep: cheaper than for all."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pathspec

from baton.core.background import daemon
from baton.core.conversation.files import read_small
from baton.core.conversation.records import unwritable
from baton.core.errors import StorageError
from baton.core.tools.workspace import Located, ToolError, Workspace
from baton.core.workspace.editor_files import VCS_DIRS

MAX_VISITED = 100_000  # entries (files and folders) one walk looks at, at most
WALK_SECONDS = 30.0  # one call's walk, at most (search_text's whole search too)
MAX_GITIGNORE_BYTES = 1_000_000
T = TypeVar("T")


@dataclass
class Walked:
    """A file the walk found: its real path and its path as shown (relative to its folder;
    with the folder's label in front (`folder_labels`) when the workspace has several)."""

    real: Path
    shown: str
    also: tuple[str, ...] = ()  # other spellings of it a glob may use (`_spellings`)

    def matches(self, glob: Callable[[str], bool]) -> bool:
        """Whether `glob` matches the path as shown or as it may be written otherwise."""
        return glob(self.shown) or any(glob(spelling) for spelling in self.also)


def walked_file(workspace: Workspace, located: Located) -> Walked:
    """The file `located` names, as `files` would find it."""
    root = next(r for r in workspace.roots if r.path == located.folder)
    return Walked(located.real, located.shown, _spellings(root, located.shown))


def _spellings(root: Located, shown: str) -> tuple[str, ...]:
    """How else a glob may write `shown`, a path under `root` of a workspace of several
    folders: relative to its folder, as a path may be given (`src/*.py` for front/src/x.py),
    and with the folder's own name where a longer label stands (`app/*.py` for one/app/x.py
    and two/app/x.py). None for a folder alone: its paths are shown relative to it anyway."""
    if root.shown == ".":
        return ()
    relative = shown[len(root.shown) + 1 :]
    name = root.path.name
    return (relative,) if name in ("", root.shown) else (relative, f"{name}/{relative}")


@dataclass
class Walk:
    cut: bool = False  # the walk stopped at MAX_VISITED
    deadline: float | None = None  # time.monotonic() past which the walk is an error
    unnamed: int = 0  # files and folders left out: names no result can show (utf8_name)
    unreadable: int = 0  # folders the walk could not list (no permission): not searched
    unread: int = 0  # files a search could not read (no permission): not searched
    why: str = ""  # the first of their errors, in words
    stopped: threading.Event = field(default_factory=threading.Event)  # its call was

    def refused(self, error: OSError) -> None:
        """os.walk's onerror: a folder it could not list is counted, not skipped silently."""
        self.unreadable += 1
        self.why = self.why or error.strerror or type(error).__name__

    def unread_file(self, why: str) -> None:
        """A file a search could not read: counted, as a folder it could not list."""
        self.unread += 1
        self.why = self.why or why

    def notes(self) -> str:
        """The notes a result ends with on what the walk left out, each on its line."""
        notes = ""
        if self.cut:
            notes += "\n[the workspace is large: the search stopped before its end]"
        if self.unnamed:
            notes += "\n" + unnamed_note(self.unnamed)
        if self.unreadable == 1:
            notes += f"\n[1 folder could not be read ({self.why}): what it holds was not searched]"
        elif self.unreadable:
            notes += (
                f"\n[{self.unreadable} folders could not be read ({self.why}): "
                "what they hold was not searched]"
            )
        if self.unread == 1:
            notes += f"\n[1 file could not be read ({self.why}): it was not searched]"
        elif self.unread:
            notes += f"\n[{self.unread} files could not be read ({self.why}): not searched]"
        return notes

    def check(self) -> None:
        if self.stopped.is_set():
            raise ToolError("the call was stopped")  # nobody reads it: the turn is over
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise ToolError("the walk of the workspace took too long; narrow it")


async def walked(walk: Walk, work: Callable[[], T]) -> T:
    """`work` (a walk, on a thread) awaited; when the call is cancelled (the user stopped
    the turn) the walk stops at its next file, instead of reading on for up to
    WALK_SECONDS beside the turns that follow."""
    try:
        return await off_loop(work)
    except asyncio.CancelledError:
        walk.stopped.set()
        raise


async def off_loop(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread of its own (`background.daemon`), for a tool's work that
    writes nothing (a walk, a listing, a diff, a pattern's compile): the process's end waits
    for the threads of `asyncio.to_thread`, so a listing held (a folder on a hung mount)
    held an `exit`, or a client gone, for good; not this one. Cancelled, this returns at
    once, the thread left to end on its own (as `lanes.off_loop`)."""
    return await daemon(work, "baton-tool")


def _spec(folder: Path) -> pathspec.GitIgnoreSpec | None:
    """The folder's `.gitignore`, read only when it is a regular file of a sane size: a
    FIFO would block the walk, a link could lead out of the workspace (to /dev/zero)."""
    try:
        data = read_small(folder / ".gitignore", MAX_GITIGNORE_BYTES)
    except (OSError, StorageError):
        return None
    if data is None:
        return None
    return pathspec.GitIgnoreSpec.from_lines(data.decode("utf-8", "replace").splitlines())


def utf8_name(name: str) -> bool:
    """Whether a result can show a file's name: it is UTF-8 (else it holds the lone
    surrogates its bytes were read as: no tool can name it, and no result or transcript can
    hold it) and on one line (a line break in it made two entries of one, `a` and `b.py`,
    or a line that reads as a result's own note)."""
    return unwritable(name) is None and "\n" not in name and "\r" not in name


def unnamed_note(count: int) -> str:
    return (
        f"[{count} not shown: their names are not UTF-8 or hold a line break, which no "
        "result can show]"
    )


def _rel(path: Path, folder: Path) -> str:
    rel = path.relative_to(folder).as_posix()
    return "" if rel == "." else rel


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    """Whether git would ignore `rel`: the deepest `.gitignore` whose patterns speak about
    it decides (a nested `!keep.log` keeps what the root's `*.log` ignores)."""
    for base, spec in reversed(specs):  # outermost first in `specs`
        if base and not rel.startswith(base + "/"):
            continue
        inner = rel[len(base) + 1 :] if base else rel
        verdict = spec.check_file(inner + "/" if is_dir else inner).include
        if verdict is not None:
            return verdict
    return False


def files(workspace: Workspace, start: Located | None, walk: Walk) -> Iterator[Walked]:
    """Every file under `start` (or every workspace folder) not ignored, in name order."""
    roots = [start] if start is not None else workspace.roots
    if not roots and workspace.only_version_control:
        raise workspace.no_folder()
    several = len(workspace.roots) > 1
    visited = 0
    for index, root in enumerate(roots):
        # a folder inside another is walked once, under the first that holds it (as a
        # path shown so is read): one earlier holds it, or it is left out of this walk
        earlier = {r.real for r in roots[:index]} if start is None else set()
        if any(root.real.is_relative_to(real) for real in earlier):
            continue
        folder = next(r for r in workspace.roots if root.real.is_relative_to(r.real))
        folder_real = folder.real
        prefix = f"{folder.shown}/" if several else ""  # the folder's label (folder_labels)
        below = _rel(root.real, folder_real) + "/" if root.real != folder_real else ""
        specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        # .gitignore files of the folders above `start`, inside the workspace folder
        base = folder_real
        for part in root.real.relative_to(folder_real).parts:
            found = _spec(base)
            if found is not None:
                specs.append((_rel(base, folder_real), found))
            base = base / part
        for current, dirs, names in os.walk(root.real, onerror=walk.refused, followlinks=False):
            here = Path(current)
            rel_here = _rel(here, folder_real)
            found = _spec(here)
            if found is not None:
                specs = [s for s in specs if s[0] != rel_here] + [(rel_here, found)]
            kept_dirs = []
            for name in sorted(dirs):
                # folders count too: a tree of empty folders was walked whole, however large
                walk.check()
                visited += 1
                if visited > MAX_VISITED:
                    walk.cut = True
                    return
                rel = f"{rel_here}/{name}" if rel_here else name
                if name.lower() in VCS_DIRS or _ignored(rel, True, specs) or here / name in earlier:
                    continue
                if not utf8_name(name):
                    walk.unnamed += 1
                    continue
                if (here / name).is_symlink():
                    continue  # never walked through: it may lead anywhere
                kept_dirs.append(name)
            dirs[:] = kept_dirs
            for name in sorted(names):
                walk.check()
                visited += 1
                if visited > MAX_VISITED:
                    walk.cut = True
                    return
                rel = f"{rel_here}/{name}" if rel_here else name
                if _ignored(rel, False, specs):
                    continue
                if not utf8_name(name):
                    walk.unnamed += 1
                    continue
                path = here / name
                if path.is_symlink():
                    try:
                        real = path.resolve()
                    except (OSError, RuntimeError):  # a loop of links
                        continue
                    if workspace.shown(real) is None or not real.is_file():
                        continue
                also = _spellings(folder, prefix + rel)
                if below:  # as written from the folder searched (search_text's path)
                    also += (rel[len(below) :],)
                yield Walked(path, prefix + rel, also)
