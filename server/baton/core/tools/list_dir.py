"""list_dir: a workspace folder's entries, folders with a trailing /, bounded: listed off
the event loop, and no more than `MAX_READ` entries read of a folder that holds more."""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from baton.core.compaction.working_set.visible import resolve_path
from baton.core.tools.registry import Tool, ToolContext, ToolResult, counted
from baton.core.tools.walk import off_loop, unnamed_note, utf8_name
from baton.core.tools.workspace import Located, ToolError, Workspace
from baton.core.workspace.editor_files import VCS_DIRS

MAX_ENTRIES = 1000  # shown
MAX_READ = 100_000  # read of one folder (a folder of a million entries took seconds)

DEFINITION: dict[str, Any] = {
    "name": "list_dir",
    "description": (
        "List a folder of the workspace (default: the workspace folders). Folders end with /."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Relative to the workspace."}},
    },
}


def title(input: dict[str, Any]) -> str:
    path = input.get("path")
    return f"List {path}" if isinstance(path, str) and path.strip() else "List the workspace"


async def run(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw = input.get("path")
    if raw is None or (isinstance(raw, str) and raw.strip() in ("", ".")):
        roots = ctx.workspace.roots
        if not roots:
            raise ctx.workspace.no_folder()
        if len(roots) > 1:
            lines = [f"{r.shown}/  ({r.path})" for r in roots]
            return ToolResult("\n".join(lines), summary=counted(len(lines), "folder"))
        located = roots[0]
    else:
        located = ctx.workspace.locate(raw)
    if not located.real.is_dir():
        raise ToolError(f"{located.shown} is not a folder")
    return await off_loop(partial(_listing, located, ctx.workspace))


def _listing(located: Located, workspace: Workspace) -> ToolResult:
    names, more = _read(located)
    entries, hidden, unnamed = [], 0, 0
    for name, is_dir, is_link in sorted(names):
        if name.lower() in VCS_DIRS:
            continue  # version control's own, as the walks leave it
        if not utf8_name(name):
            unnamed += 1
            continue
        if workspace.shown(located.real / name) is None:
            hidden += 1  # a credential file (restore.exclude): never named, as find_files
            continue
        if is_link:  # a folder to every tool that follows it: one of the workspace only
            real = resolve_path(located.real / name)
            is_dir = real is not None and real.is_dir() and workspace.shown(real) is not None
        entries.append(name + ("/" if is_dir else ""))
    total = len(entries)
    text = "\n".join(entries[:MAX_ENTRIES]) or "(empty folder)"
    if total > MAX_ENTRIES:
        text += f"\n[cut: {MAX_ENTRIES} of {total} entries shown]"
    if more:
        text += (
            f"\n[the folder holds more than {MAX_READ:,} entries: these are of the first "
            f"{MAX_READ:,} read; find_files with a pattern reaches the others]"
        )
    if hidden:
        text += f"\n[{hidden} not shown: they may hold credentials (restore.exclude)]"
    if unnamed:
        text += "\n" + unnamed_note(unnamed)
    summary = f"{total}+ entries" if more else counted(total, "entry", "entries")
    return ToolResult(text, summary=summary)


def _read(located: Located) -> tuple[list[tuple[str, bool, bool]], bool]:
    """The folder's first `MAX_READ` entries (name, whether a folder, links not followed,
    whether a link) and whether it holds more."""
    names: list[tuple[str, bool, bool]] = []
    try:
        with os.scandir(located.real) as found:
            for entry in found:
                if len(names) == MAX_READ:
                    return names, True
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_link = entry.is_symlink()
                except OSError:
                    continue
                names.append((entry.name, is_dir, is_link))
    except OSError as exc:
        raise ToolError(f"{located.shown} cannot be listed ({exc.strerror or exc})") from None
    return names, False


TOOL = Tool(DEFINITION, "auto", "read", run, title=title)
