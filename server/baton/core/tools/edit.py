"""Edits: the API's text editor tool (view / str_replace / create / insert) for the models
trained on it, else `edit_file`; each edit planned as a whole-file change with its diff,
applied through the host (the editor), and answered with what was applied or why not."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from baton.core.tools import list_dir, read_file
from baton.core.tools.diffs import edit_title, unified
from baton.core.tools.host import FileEdit
from baton.core.tools.registry import Call, Tool, ToolContext, ToolResult
from baton.core.tools.workspace import FileText, Located, ToolError, read_any, split_lines

TEXT_EDITOR = "str_replace_based_edit_tool"
TEXT_EDITOR_TYPE = "text_editor_20250728"
EDIT_FILE = "edit_file"
_BREAK = re.compile(r"\r\n|\r|\n")
BOM = "\ufeff"  # UTF-8's byte order mark, as a file's text read from the disk starts
DIFF_ON_LOOP = 200_000  # characters (before and after) past which the diff runs on a thread
_FAMILY = re.compile(r"claude-(?:opus|sonnet|haiku)-(\d+)|claude-(\d+)")

EDIT_FILE_DEFINITION: dict[str, Any] = {
    "name": EDIT_FILE,
    "description": (
        "Edit a workspace file: replace oldText (which must occur exactly once; include "
        "enough surrounding lines) with newText. An empty oldText on a file that does not "
        "exist creates it with newText, on an empty file fills it. The user may be asked to "
        "approve the edit."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "oldText": {"type": "string"},
            "newText": {"type": "string"},
        },
        "required": ["path", "oldText", "newText"],
    },
}


def supports_text_editor(model: str) -> bool:
    """Claude 4 and later models take the text editor tool `text_editor_20250728`."""
    found = _FAMILY.search(model)
    if found is None:
        return False
    return int(found.group(1) or found.group(2)) >= 4


def _text(input: dict[str, Any], key: str, *, allow_empty: bool = True) -> str:
    value = input.get(key)
    if not isinstance(value, str) or (not allow_empty and not value):
        raise ToolError(f"{key} must be a{' non-empty' if not allow_empty else ''} string")
    return value


def line_end(text: str) -> str | None:
    """The line end `text` uses (its first: `\r\n`, `\r` or `\n`), None without one."""
    found = _BREAK.search(text)
    return found.group() if found is not None else None


def _with_end(text: str, end: str | None) -> str:
    return text if end is None else _BREAK.sub(end, text)


MAX_COUNTED = 1000  # matches of the text to replace counted, at most


def _quoted(old: str) -> re.Pattern[str]:
    """What `old` matches: itself, its line breaks (\\n, as read_file shows them, when it
    holds no \\r) any of \\r\\n, \\r and \\n: a file's lines may end in each (mixed)."""
    if "\n" not in old or "\r" in old:
        return re.compile(re.escape(old))
    # a break is a whole \r\n, never its \r or \n alone (`\ny` once in `x\r\ny`)
    breaks = r"(?:\r\n|\r(?!\n)|(?<!\r)\n)"
    return re.compile(breaks.join(re.escape(line) for line in old.split("\n")))


def occurrences(text: str, old: str | re.Pattern[str]) -> int:
    """The places `old` matches in `text` (at most MAX_COUNTED), overlapping ones too:
    `str.count` counts '}\\n}\\n' once in three closing braces, and an edit meant for the
    last two went to the first two."""
    pattern = re.compile(re.escape(old)) if isinstance(old, str) else old
    found, match = 0, pattern.search(text)
    while match is not None and found < MAX_COUNTED:
        found, match = found + 1, pattern.search(text, match.start() + 1)
    return found


def replaced(shown: str, before: str, old: str, new: str) -> tuple[str, int]:
    """`before` with `old` (once) replaced by `new`, whose lines end as the replaced text's
    do (else as the file's), and the line `old` started at (the result says it: a view's
    diff of the call shows it)."""
    if not old:
        raise ToolError("the text to replace must not be empty")
    pattern = _quoted(old)
    found = occurrences(before, pattern)
    if found == 0:
        raise ToolError(f"no match in {shown} for the text to replace (it must match exactly)")
    if found > 1:
        times = f"{found:,} times" if found < MAX_COUNTED else f"{MAX_COUNTED:,} times or more"
        raise ToolError(
            f"the text to replace occurs {times} in {shown}; include more lines so it matches once"
        )
    match = pattern.search(before)
    assert match is not None  # found once
    line = len(_BREAK.findall(before[: match.start()])) + 1
    end = line_end(match.group()) or line_end(before)
    return before[: match.start()] + _with_end(new, end) + before[match.end() :], line


def _marked(before: FileText | None, text: str) -> str:
    """`text` in place of the whole file, with the file's UTF-8 byte order mark kept (its
    encoding, which an editor keeps when it applies the edit to its document)."""
    if before is not None and before.text.startswith(BOM) and not text.startswith(BOM):
        return BOM + text
    return text


def inserted(shown: str, before: str, line: object, new: str) -> str:
    bom = BOM if before.startswith(BOM) else ""  # the encoding's: it stays first
    lines = split_lines(before, keepends=True)  # the mark left out
    if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line <= len(lines):
        raise ToolError(f"insert_line must be between 0 and {len(lines)} for {shown}")
    end = line_end(before) or "\n"  # the file's own line ends
    if lines and line == len(lines) and not lines[-1].endswith(("\r", "\n")):
        lines[-1] += end
    piece = _with_end(new, end)
    if not piece.endswith(end):
        piece += end
    return bom + "".join(lines[:line]) + piece + "".join(lines[line:])


def _edited(raw: object, ctx: ToolContext) -> Located:
    """The file an edit names (it may not exist yet). A path ending in / names a folder
    (`docs/`): no edit makes a file of it, as the dropped slash of `Path` would."""
    if isinstance(raw, str) and raw.strip().endswith("/"):
        raise ToolError(f"{raw.strip()!r} names a folder (it ends in /): give the file's path")
    located = ctx.workspace.locate(raw, must_exist=False)
    _check_room(located)
    return located


def _check_room(located: Located) -> None:
    """ToolError when a file of the path sits where a folder must be (`x.py/y.py`): the
    user would be asked about an edit no host can apply."""
    found = located.real
    while not os.path.lexists(found) and found.parent != found:
        found = found.parent
    if found == located.real or found.is_dir():
        return
    parts = located.shown.split("/")
    above = "/".join(parts[: len(parts) - len(located.real.relative_to(found).parts)])
    raise ToolError(f"{located.shown} cannot be made: {above} is a file, not a folder")


async def _current(located: Located, ctx: ToolContext) -> FileText | None:
    return await read_any(located, ctx.host)


async def edit_call(
    located: Located, before: FileText | None, after: str, ctx: ToolContext, line: int = 0
) -> Call:
    """The call that applies `after` to the file `before` was read from (a new file: None);
    `line`, where a replaced text started, is said in the result (`at line 12`).
    The diff of a large file is worked out on a thread (difflib: about a second for a file
    of 200,000 lines), so the server's other requests are answered meanwhile."""
    old = before.text if before is not None else None
    path = before.path if before is not None else located.path
    if len(old or "") + len(after) > DIFF_ON_LOOP:
        diff = await asyncio.to_thread(unified, located.shown, old or "", after)
    else:
        diff = unified(located.shown, old or "", after)
    title = edit_title(located.shown, diff, created=before is None)

    async def apply() -> ToolResult:
        outcome = await ctx.host.apply_edit(FileEdit(path, old, after, title))
        if outcome.applied:
            at = f" at line {line}" if line else ""
            return ToolResult(f"Applied: {title}{at}.", summary="applied")
        reason = outcome.reason or "the editor did not apply it"
        return ToolResult(
            f"Not applied: {reason}. {located.shown} is unchanged.",
            is_error=True,
            summary=reason,
            status="failed",
        )

    return Call(title, "edit", "edit", apply, path=located.shown, diff=diff)


async def plan_edit_file(input: dict[str, Any], ctx: ToolContext) -> Call:
    old, new = _text(input, "oldText"), _text(input, "newText")
    located = _edited(input.get("path"), ctx)
    before = await _current(located, ctx)
    if before is None:
        if old:
            raise ToolError(f"{located.shown} does not exist (give an empty oldText to create it)")
        return await edit_call(located, None, new, ctx)
    if not old and not before.text.removeprefix(BOM):  # an empty file: nothing else can match
        return await edit_call(located, before, _marked(before, new), ctx)
    after, line = replaced(located.shown, before.text, old, new)
    return await edit_call(located, before, after, ctx, line)


async def plan_text_editor(input: dict[str, Any], ctx: ToolContext) -> Call:
    command = input.get("command")
    if command == "view":
        return await _plan_view(input, ctx)
    if command not in ("str_replace", "create", "insert"):
        raise ToolError(f"unknown command {command!r} (view, str_replace, create, insert)")
    located = _edited(input.get("path"), ctx)
    before = await _current(located, ctx)
    if command == "create":
        return await edit_call(located, before, _marked(before, _text(input, "file_text")), ctx)
    if before is None:
        raise ToolError(f"{located.shown} does not exist")
    if command == "str_replace":
        old = _text(input, "old_str")
        after, line = replaced(located.shown, before.text, old, _text(input, "new_str"))
        return await edit_call(located, before, after, ctx, line)
    piece = input.get("new_str", input.get("insert_text"))
    if not isinstance(piece, str):
        raise ToolError("new_str must be a string")
    after = inserted(located.shown, before.text, input.get("insert_line"), piece)
    return await edit_call(located, before, after, ctx)


async def _plan_view(input: dict[str, Any], ctx: ToolContext) -> Call:
    path = input.get("path")
    args: dict[str, Any] = {"path": path, **_view_lines(input.get("view_range"))}
    located = ctx.workspace.locate(path, must_exist=False)  # a buffer not saved yet is a file
    if located.real.is_dir():

        async def listing() -> ToolResult:
            return await list_dir.run({"path": path}, ctx)

        return Call(list_dir.title({"path": path}), "read", "list_dir", listing)

    async def reading() -> ToolResult:
        return await read_file.run(args, ctx)

    return Call(read_file.title(args), "read", "read_file", reading, path=located.shown)


def _view_lines(view_range: object) -> dict[str, int]:
    """read_file's startLine and endLine for a view's `view_range` ([start, end], 1-based,
    an end of -1 reading to the end); ToolError in the view's words for anything else."""
    if view_range is None:
        return {}
    if isinstance(view_range, list) and len(view_range) == 2:
        start, end = view_range
        numbers = all(isinstance(n, int) and not isinstance(n, bool) for n in (start, end))
        if numbers and start >= 1 and end == -1:
            return {"startLine": start}
        if numbers and 1 <= start <= end:
            return {"startLine": start, "endLine": end}
    raise ToolError(
        f"view_range must be two line numbers [start, end], 1-based, start <= end (an end "
        f"of -1 reads to the end of the file); got {view_range!r}"
    )


async def _not_planned(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raise ToolError("this tool runs only through its plan")


def _edit_title(input: dict[str, Any]) -> str:
    path = input.get("path")
    return f"Edit {path if isinstance(path, str) and path.strip() else '?'}"


def _text_editor_key(input: dict[str, Any]) -> str | None:
    return None if input.get("command") == "view" else "edit"  # a view reads or lists


TEXT_EDITOR_TOOL = Tool(
    {"type": TEXT_EDITOR_TYPE, "name": TEXT_EDITOR},
    "ask",
    "edit",
    _not_planned,
    plan_text_editor,
    title=_edit_title,
    level_key=_text_editor_key,
)
EDIT_FILE_TOOL = Tool(
    EDIT_FILE_DEFINITION,
    "ask",
    "edit",
    _not_planned,
    plan_edit_file,
    title=_edit_title,
    level_key=lambda _: "edit",
)
