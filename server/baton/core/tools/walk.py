"""The workspace's files, walked once per call: `.gitignore` files (nested ones too) and
`.git` honoured, symlinks that leave the folders skipped, the walk bounded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from baton.core.tools.workspace import Located, Workspace

MAX_VISITED = 100_000  # entries one walk looks at, at most
SKIPPED_DIRS = {".git", ".hg", ".svn"}


@dataclass
class Walked:
    """A file the walk found: its real path and its path as shown (relative to its folder;
    with the folder's name in front when the workspace has several)."""

    real: Path
    shown: str


@dataclass
class Walk:
    cut: bool = False  # the walk stopped at MAX_VISITED


def _spec(folder: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _rel(path: Path, folder: Path) -> str:
    rel = path.relative_to(folder).as_posix()
    return "" if rel == "." else rel


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    for base, spec in specs:
        if base and not rel.startswith(base + "/"):
            continue
        inner = rel[len(base) + 1 :] if base else rel
        if spec.match_file(inner + "/" if is_dir else inner):
            return True
    return False


def files(workspace: Workspace, start: Located | None, walk: Walk) -> Iterator[Walked]:
    """Every file under `start` (or every workspace folder) not ignored, in name order."""
    roots = [start] if start is not None else workspace.roots
    several = len(workspace.roots) > 1
    visited = 0
    for root in roots:
        folder_real = next(r.real for r in workspace.roots if root.real.is_relative_to(r.real))
        prefix = f"{folder_real.name}/" if several else ""
        specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        # .gitignore files of the folders above `start`, inside the workspace folder
        base = folder_real
        for part in root.real.relative_to(folder_real).parts:
            found = _spec(base)
            if found is not None:
                specs.append((_rel(base, folder_real), found))
            base = base / part
        for current, dirs, names in os.walk(root.real, followlinks=False):
            here = Path(current)
            rel_here = _rel(here, folder_real)
            found = _spec(here)
            if found is not None:
                specs = [s for s in specs if s[0] != rel_here] + [(rel_here, found)]
            kept_dirs = []
            for name in sorted(dirs):
                rel = f"{rel_here}/{name}" if rel_here else name
                if name in SKIPPED_DIRS or _ignored(rel, True, specs):
                    continue
                if (here / name).is_symlink():
                    continue  # never walked through: it may lead anywhere
                kept_dirs.append(name)
            dirs[:] = kept_dirs
            for name in sorted(names):
                visited += 1
                if visited > MAX_VISITED:
                    walk.cut = True
                    return
                rel = f"{rel_here}/{name}" if rel_here else name
                if _ignored(rel, False, specs):
                    continue
                path = here / name
                if path.is_symlink():
                    real = path.resolve()
                    if workspace.shown(real) is None or not real.is_file():
                        continue
                yield Walked(path, prefix + rel)
