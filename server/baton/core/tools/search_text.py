"""search_text: a regular expression over the workspace's text files (`.gitignore`
honoured, binary and credential files skipped), hits as `path:line: text`, bounded."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from baton.core.compaction.working_set.credentials import credential_in
from baton.core.tools.find_files import matches
from baton.core.tools.registry import Tool, ToolContext, ToolResult
from baton.core.tools.walk import Walk, files
from baton.core.tools.workspace import MAX_FILE_BYTES, Located, ToolError, Workspace, read_disk

MAX_HITS = 200
MAX_HIT_CHARS = 300
MAX_PATTERN = 1000

DEFINITION: dict[str, Any] = {
    "name": "search_text",
    "description": (
        "Search the workspace's text files with a regular expression (Python syntax); "
        "hits come as `path:line: text`. `path` limits the search to a folder or file, "
        "`glob` to file names or paths (`*.py`). Files .gitignore ignores are skipped."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string"},
            "glob": {"type": "string"},
        },
        "required": ["pattern"],
    },
}


def title(input: dict[str, Any]) -> str:
    return f"Search `{input.get('pattern') or '?'}`"


def _search(
    workspace: Workspace, start: Located | None, regex: re.Pattern[str], glob: str | None
) -> tuple[list[str], int, int, bool]:
    walk = Walk()
    hits: list[str] = []
    total = files_hit = 0
    entries: Iterable[tuple[Path, str]]
    if start is not None and start.real.is_file():
        entries = [(start.real, start.shown)]
    else:
        entries = ((w.real, w.shown) for w in files(workspace, start, walk))
    for real, shown in entries:
        if glob is not None and not matches(glob, shown):
            continue
        if workspace.shown(real) is None:
            continue  # a credential file (restore.exclude): never searched
        try:
            if real.stat().st_size > MAX_FILE_BYTES:
                continue
            text = read_disk(Located(real, real, shown, real.parent))
        except (ToolError, OSError):
            continue  # binary, unreadable: not text to search
        if credential_in(text) is not None:
            continue
        hit_here = False
        for number, line in enumerate(text.splitlines(), 1):
            if regex.search(line) is None:
                continue
            total += 1
            hit_here = True
            if len(hits) < MAX_HITS:
                cut = line if len(line) <= MAX_HIT_CHARS else line[:MAX_HIT_CHARS] + " [cut]"
                hits.append(f"{shown}:{number}: {cut.strip()}")
        files_hit += hit_here
    return hits, total, files_hit, walk.cut


async def run(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = input.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ToolError("pattern must be a non-empty regular expression")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"pattern is longer than {MAX_PATTERN} characters")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"pattern is not a valid regular expression: {exc}") from None
    raw_path, glob = input.get("path"), input.get("glob")
    if glob is not None and (not isinstance(glob, str) or not glob.strip()):
        raise ToolError("glob must be a non-empty string")
    start = None
    if isinstance(raw_path, str) and raw_path.strip() not in ("", "."):
        start = ctx.workspace.locate(raw_path)
    elif raw_path is not None and not isinstance(raw_path, str):
        raise ToolError("path must be a string")
    hits, total, files_hit, cut = await asyncio.to_thread(
        _search, ctx.workspace, start, regex, glob.strip() if glob else None
    )
    text = "\n".join(hits) if hits else f"No hits for {pattern!r}."
    if total > MAX_HITS:
        text += f"\n[cut: {MAX_HITS} of {total} hits shown (in {files_hit} files); narrow it]"
    if cut:
        text += "\n[the workspace is large: the search stopped before its end]"
    return ToolResult(text, summary=f"{total} hits")


TOOL = Tool(DEFINITION, "auto", "search", run, title=title)
