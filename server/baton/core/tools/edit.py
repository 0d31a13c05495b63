"""Edits: the API's text editor tool (view / str_replace / create / insert) for the models
trained on it, else `edit_file`; each edit planned as a whole-file change with its diff,
applied through the host (the editor), and answered with what was applied or why not."""

from __future__ import annotations

import os
import re
from functools import partial
from typing import Any

from baton.core.conversation.records import unwritable
from baton.core.tools import list_dir, read_file
from baton.core.tools.diffs import edit_title, unified
from baton.core.tools.edit_text import BOM, inserted, replaced, whole
from baton.core.tools.file_reads import FileText, read_any
from baton.core.tools.host import FileEdit
from baton.core.tools.registry import Call, Tool, ToolContext, ToolResult
from baton.core.tools.walk import off_loop
from baton.core.tools.workspace import Located, ToolError

TEXT_EDITOR = "str_replace_based_edit_tool"
TEXT_EDITOR_TYPE = "text_editor_20250728"
EDIT_FILE = "edit_file"
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


def _edited(raw: object, ctx: ToolContext) -> Located:
    """The file an edit names (it may not exist yet). A path ending in / names a folder
    (`docs/`): no edit makes a file of it, as the dropped slash of `Path` would; nor of a
    new name with a line break, which the walks leave out (`utf8_name`), nor under `~/`
    (the model's home folder, as a shell reads it) when the folder holds no `~`."""
    if isinstance(raw, str) and raw.strip().endswith("/"):
        raise ToolError(f"{raw.strip()!r} names a folder (it ends in /): give the file's path")
    located = ctx.workspace.locate(raw, must_exist=False)
    _check_room(located)
    named = str(raw).strip()  # (spaces around it are the model's: `locate`)
    if os.path.lexists(located.real):
        return located
    if "\n" in named or "\r" in named:
        raise ToolError(
            f"{named!r} holds a line break: a file so named is never listed "
            "(list_dir and find_files leave such names out)"
        )
    head, _, rest = named.partition("/")  # `~/`, `~user/`: a shell's, unless the folder has one
    if head.startswith("~") and rest and not os.path.lexists(located.folder / head):
        raise ToolError(
            f"{named!r}: ~ is the home folder to a shell, not a folder here; give the path "
            "from a workspace folder, or absolute"
        )
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
    if old == after:  # nobody is asked about an empty diff
        raise ToolError(f"the edit changes nothing: {located.shown} already holds that text")
    if unwritable(after) is not None:  # no host could write it (the disk's left it empty)
        raise ToolError(
            "the new text holds a lone surrogate, which no UTF-8 file can hold; nothing was changed"
        )
    path = before.path if before is not None else located.path
    if len(old or "") + len(after) > DIFF_ON_LOOP:
        diff = await off_loop(partial(unified, located.shown, old or "", after))
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
        return await edit_call(located, before, whole(before, new), ctx)
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
        return await edit_call(located, before, whole(before, _text(input, "file_text")), ctx)
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
