"""list_dir: a workspace folder's entries, folders with a trailing /, bounded."""

from __future__ import annotations

from typing import Any

from baton.core.tools.registry import Tool, ToolContext, ToolResult
from baton.core.tools.walk import unnamed_note, utf8_name
from baton.core.tools.workspace import ToolError

MAX_ENTRIES = 1000

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
            raise ToolError("no workspace folder is open: the tools work only inside one")
        if len(roots) > 1:
            lines = [f"{r.path.name}/  ({r.path})" for r in roots]
            return ToolResult("\n".join(lines), summary=f"{len(lines)} folders")
        located = roots[0]
    else:
        located = ctx.workspace.locate(raw)
    if not located.real.is_dir():
        raise ToolError(f"{located.shown} is not a folder")
    try:
        children = sorted(located.real.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise ToolError(f"{located.shown} cannot be listed ({exc.strerror or exc})") from None
    entries, hidden, unnamed = [], 0, 0
    for child in children:
        if child.name == ".git":
            continue
        if not utf8_name(child.name):
            unnamed += 1
            continue
        if ctx.workspace.shown(child) is None:
            hidden += 1  # a credential file (restore.exclude): never named, as find_files
            continue
        try:
            is_dir = child.is_dir() and not child.is_symlink()
        except OSError:
            continue
        entries.append(child.name + ("/" if is_dir else ""))
    total = len(entries)
    text = "\n".join(entries[:MAX_ENTRIES]) or "(empty folder)"
    if total > MAX_ENTRIES:
        text += f"\n[cut: {MAX_ENTRIES} of {total} entries shown]"
    if hidden:
        text += f"\n[{hidden} not shown: they may hold credentials (restore.exclude)]"
    if unnamed:
        text += "\n" + unnamed_note(unnamed)
    return ToolResult(text, summary=f"{total} entries")


TOOL = Tool(DEFINITION, "auto", "read", run, title=title)
