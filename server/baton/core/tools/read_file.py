"""read_file: a file's lines (a range of them) numbered, the editor's unsaved text when the
file is open there, cut at a line, character and line-length bound with a note saying so."""

from __future__ import annotations

import re
from typing import Any

from baton.core.tools.file_reads import read_any
from baton.core.tools.registry import Tool, ToolContext, ToolResult, counted
from baton.core.tools.workspace import ToolError, glob_hint, split_lines

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_CHARS = 100_000  # the whole result, its notes included (every result's bound too)
_AT_LINE = re.compile(r"(.+?):(\d+)(?::\d+)?")  # `app.py:42`, `app.py:42:7`
NOTES_ROOM = 300  # kept for the notes: lines shown up to the brim left them past the bound

DEFINITION: dict[str, Any] = {
    "name": "read_file",
    "description": (
        "Read a text file of the workspace with line numbers (the editor's unsaved text "
        "when the file is open). Paths are relative to a workspace folder. Give startLine "
        "and endLine (1-based, inclusive) to read part of a large file; long output is cut "
        "with a note saying how to read on. A line longer than 2,000 characters is cut "
        "there; startColumn (1-based) starts each line at that character, to read the rest."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace."},
            "startLine": {"type": "integer", "minimum": 1},
            "endLine": {"type": "integer", "minimum": 1},
            "startColumn": {
                "type": "integer",
                "minimum": 1,
                "description": "The character each line starts at (1-based; default 1).",
            },
        },
        "required": ["path"],
    },
}


def _line_arg(input: dict[str, Any], key: str) -> int | None:
    value = input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"{key} must be a positive integer")
    return value


def title(input: dict[str, Any]) -> str:
    path = str(input.get("path") or "?")
    start, end = input.get("startLine"), input.get("endLine")
    if isinstance(start, int) or isinstance(end, int):
        return f"Read {path}:{start or 1}-{end or ''}".rstrip("-")
    return f"Read {path}"


def numbered(
    text: str, start: int | None, end: int | None, shown: str, column: int = 1
) -> ToolResult:
    """Lines start..end of `text`, numbered, each from its character `column` on, within
    the bounds; the notes say what was cut and how to read it."""
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return ToolResult(f"{shown} is empty.", summary="empty")
    first = start or 1
    if first > total:
        raise ToolError(f"{shown} has {total} lines; startLine {first} is past its end")
    last = min(end or total, total)
    if last < first:
        raise ToolError("endLine must not be before startLine")
    out: list[str] = []
    chars = 0
    long_lines = 0
    first_cut: tuple[int, int] | None = None  # a cut line's number, where its rest begins
    shown_last = first - 1
    for number in range(first, last + 1):
        whole = lines[number - 1]
        line = whole[column - 1 :]
        long = len(line) > MAX_LINE_CHARS
        if long:
            ends = column - 1 + MAX_LINE_CHARS
            line = f"{line[:MAX_LINE_CHARS]} [line cut at character {ends:,} of {len(whole):,}]"
        entry = f"{number:6}\t{line}"
        if len(out) >= MAX_LINES or chars + len(entry) > MAX_CHARS - NOTES_ROOM:
            break
        long_lines += long  # a line left unshown is not cut: the next read shows it
        if long and first_cut is None:
            first_cut = (number, column + MAX_LINE_CHARS)
        out.append(entry)
        chars += len(entry) + 1
        shown_last = number
    notes: list[str] = []
    if shown_last < last:
        notes.append(
            f"[cut: lines {first}-{shown_last} of {total} shown; read on with "
            f"startLine={shown_last + 1}]"
        )
    elif last < total and end is not None:
        notes.append(f"[lines {first}-{last} of {total}]")
    if first_cut is not None:
        number, rest = first_cut
        notes.append(
            f"[{long_lines} line(s) longer than {MAX_LINE_CHARS} characters were cut; to read "
            f"on in line {number}, give startLine={number}, endLine={number}, "
            f"startColumn={rest}]"
        )
    count = shown_last - first + 1
    summary = counted(count, "line") + (" (cut)" if shown_last < last else "")
    return ToolResult("\n".join(out + notes), summary=summary)


async def run(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    start, end = _line_arg(input, "startLine"), _line_arg(input, "endLine")
    column = _line_arg(input, "startColumn") or 1
    located = ctx.workspace.locate(input.get("path"), must_exist=False)  # the editor's too
    found = await read_any(located, ctx.host)
    if found is None:
        raise ToolError(f"{located.shown} does not exist{_line_hint(located.shown, ctx)}")
    return numbered(found.text, start, end, located.shown, column)


def _line_hint(shown: str, ctx: ToolContext) -> str:
    """How to read from a line, for a path naming one (`app.py:42`, as compilers and search
    results do) whose file exists; else what `read_contained` would add (a glob's hint)."""
    named = _AT_LINE.fullmatch(shown)
    if named is not None:
        try:
            ctx.workspace.locate(named[1])
        except ToolError:
            pass
        else:
            return f" (to read {named[1]} from line {named[2]}, give startLine {named[2]})"
    return glob_hint(shown)


TOOL = Tool(DEFINITION, "auto", "read", run, title=title)
