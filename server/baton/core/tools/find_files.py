"""find_files: files of the workspace whose path matches a glob, `.gitignore` honoured."""

from __future__ import annotations

import asyncio
import fnmatch
from typing import Any

from baton.core.tools.registry import Tool, ToolContext, ToolResult
from baton.core.tools.walk import Walk, files
from baton.core.tools.workspace import ToolError, Workspace

MAX_RESULTS = 500
MAX_PATTERN = 1000

DEFINITION: dict[str, Any] = {
    "name": "find_files",
    "description": (
        "Find files in the workspace folders by glob (`**/*.py`, `src/**/test_*.ts`, "
        "`*.md`); files .gitignore ignores are left out."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
    },
}


def title(input: dict[str, Any]) -> str:
    return f"Find {input.get('pattern') or '?'}"


def matches(pattern: str, shown: str) -> bool:
    """A glob against a relative path: `**/` matches any folders (none too); a pattern
    without a / matches the file's name anywhere."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(shown.rsplit("/", 1)[-1], pattern)
    shapes = {pattern}
    while any("**/" in s for s in shapes):
        shapes = {t for s in shapes for t in (s.replace("**/", "", 1), s.replace("**/", "*/", 1))}
        if len(shapes) > 64:
            break
    return any(fnmatch.fnmatchcase(shown, s.replace("**", "*")) for s in shapes) or (
        fnmatch.fnmatchcase(shown, pattern.replace("**", "*"))
    )


def _find(workspace: Workspace, pattern: str) -> tuple[list[str], int, bool]:
    walk = Walk()
    found: list[str] = []
    total = 0
    for entry in files(workspace, None, walk):
        if matches(pattern, entry.shown) and workspace.shown(entry.real) is not None:
            total += 1  # (a credential file, restore.exclude, is never listed)
            if len(found) < MAX_RESULTS:
                found.append(entry.shown)
    return found, total, walk.cut


async def run(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = input.get("pattern")
    if not isinstance(pattern, str) or not pattern.strip():
        raise ToolError("pattern must be a non-empty glob")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"pattern is longer than {MAX_PATTERN} characters")
    pattern = pattern.strip().removeprefix("./")
    # a walk of a large workspace takes a while: off the event loop
    found, total, cut = await asyncio.to_thread(_find, ctx.workspace, pattern)
    text = "\n".join(found) if found else f"No files match {pattern}."
    if total > MAX_RESULTS:
        text += f"\n[cut: {MAX_RESULTS} of {total} files shown; narrow the pattern]"
    if cut:
        text += "\n[the workspace is large: the search stopped before its end]"
    return ToolResult(text, summary=f"{total} files")


TOOL = Tool(DEFINITION, "auto", "search", run, title=title)
