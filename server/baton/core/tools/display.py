"""What the panel shows of each tool call: one line (`Read app.py:1-80`, "Search
`parse_date` (12 hits)", `Edit utils.py (+4 -1)`), its status and summary, an edit's
diff; computed from the stored calls and results for views, never stored."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from baton.core.compaction.working_set.plan_todos import TODO_TOOL
from baton.core.conversation.messages import (
    CLEARED_RESULT,
    Message,
    ToolCallInfo,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.tools import find_files, list_dir, read_file, search_text
from baton.core.tools.diffs import at_line, edit_title, unified
from baton.core.tools.edit import EDIT_FILE, TEXT_EDITOR
from baton.core.tools.registry import counted

CallStatus = Literal["pending", "running", "done", "denied", "failed"]
__all__ = ["ToolCallInfo", "call_info", "with_tool_calls"]
_HITS = re.compile(r"\[cut: \d+ of (\d+) hits")
_CUT = re.compile(r"^\[cut: \d+ of (\d+) (files|entries) shown", re.MULTILINE)
_ROOT = re.compile(r"^.+/  \(.+\)$")  # list_dir of several workspace folders: one a line
_NUMBERED = re.compile(r"^\s*\d+\t", re.MULTILINE)
_AT_LINE = re.compile(r"Applied: .* at line (\d+)\.$")  # a replace's result (edit.py)
_HIT = re.compile(r"^.+?:\d+: ", re.MULTILINE)  # search_text's `path:line: text`
TITLE_CHARS = 200  # of a call's title: it names the call by its input, which may be huge


def _text(result: ToolResultBlock) -> str:
    content = result.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _edit(
    use: ToolUseBlock, input: dict[str, Any], result: str
) -> tuple[str, str | None, str | None]:
    """An edit's title, path and diff, rebuilt from its input: a replace's diff numbered
    from the line its result says it changed (none when not said), an insert's from
    the line it names."""
    path = str(input.get("path") or "?")
    command = input.get("command")
    line: int | None = 1
    if use.name == EDIT_FILE or command == "str_replace":
        keys = ("oldText", "newText") if use.name == EDIT_FILE else ("old_str", "new_str")
        old, new = str(input.get(keys[0]) or ""), str(input.get(keys[1]) or "")
        at = _AT_LINE.match(result)
        line = int(at.group(1)) if at else None if old else 1  # (an empty oldText: a new file)
    elif command == "create":
        old, new = "", str(input.get("file_text") or "")
    elif command == "insert":
        old, new = "", str(input.get("new_str", input.get("insert_text")) or "")
        after = input.get("insert_line")
        numbered = isinstance(after, int) and not isinstance(after, bool) and after >= 0
        line = after + 1 if isinstance(after, int) and numbered else None
    else:  # view
        return read_file.title({"path": path, **_view_range(input)}), path, None
    diff = unified(path, old, new)
    return edit_title(path, diff, created=command == "create"), path, at_line(diff, line)


def _view_range(input: dict[str, Any]) -> dict[str, Any]:
    found = input.get("view_range")
    if isinstance(found, list) and len(found) == 2 and found[1] != -1:
        return {"startLine": found[0], "endLine": found[1]}
    if isinstance(found, list) and found:
        return {"startLine": found[0]}
    return {}


def _summary(name: str, text: str, error: bool) -> str | None:
    first = text.strip().split("\n", 1)[0]
    if error:
        return first.removeprefix("Error: ")[:120]
    if text == CLEARED_RESULT:  # a microcompaction's placeholder, no listing of nothing
        return "cleared"
    if name in (EDIT_FILE, TEXT_EDITOR) and first.startswith("Applied"):
        return "applied"
    if name == search_text.DEFINITION["name"]:
        cut = _HITS.search(text)
        hits = int(cut.group(1)) if cut else len(_HIT.findall(text))  # its notes are none
        return "0 hits" if first.startswith("No hits") else counted(hits, "hit")
    if name in (read_file.DEFINITION["name"], TEXT_EDITOR):
        if "\n" not in text and text.endswith(" is empty."):
            return "empty"
        lines = counted(len(_NUMBERED.findall(text)), "line")
        return lines + (" (cut)" if "[cut:" in text else "")
    if name == find_files.DEFINITION["name"]:
        return "0 files" if first.startswith("No files") else counted(_listed(text), "file")
    if name == list_dir.DEFINITION["name"]:
        roots = [line for line in text.splitlines() if not line.startswith("[")]
        if roots and all(_ROOT.match(line) for line in roots):
            return counted(len(roots), "folder")
        if first == "(empty folder)":
            return "0 entries"
        return counted(_listed(text), "entry", "entries")
    return None


def _listed(text: str) -> int:
    """How many paths a listing found: its cut note's total, else its lines (the notes
    after them, in brackets, are not paths): the count the tool told live."""
    cut = _CUT.search(text)
    if cut:
        return int(cut.group(1))
    return sum(1 for line in text.splitlines() if line and not line.startswith("["))


def call_info(use: ToolUseBlock, result: ToolResultBlock | None, running: bool) -> ToolCallInfo:
    input: dict[str, Any] = use.input if isinstance(use.input, dict) else {}
    path: str | None = str(input["path"]) if isinstance(input.get("path"), str) else None
    diff = None
    titles = {
        read_file.DEFINITION["name"]: read_file.title,
        list_dir.DEFINITION["name"]: list_dir.title,
        find_files.DEFINITION["name"]: find_files.title,
        search_text.DEFINITION["name"]: search_text.title,
    }
    if use.name in (EDIT_FILE, TEXT_EDITOR):
        title, path, diff = _edit(use, input, _text(result) if result is not None else "")
    elif use.name in titles:
        title = titles[use.name](input)
    else:
        title = use.name
    if len(title) > TITLE_CHARS:  # a path or a pattern of megabytes, the model's own
        title = title[: TITLE_CHARS - 1] + "…"
    if result is None:
        status: CallStatus = "running" if running else "pending"
        return ToolCallInfo(
            tool_use_id=use.id, tool=use.name, title=title, status=status, path=path, diff=diff
        )
    text = _text(result)
    error = bool(result.is_error)
    status = ("denied" if text.startswith("Denied") else "failed") if error else "done"
    summary = _summary(use.name, text, error)
    todos = input.get("todos")
    if use.name == TODO_TOOL and not error and isinstance(todos, list):
        summary = f"{len(todos)} items"  # as the tool said it (turn/todo_tool.py)
    if use.name == search_text.DEFINITION["name"] and summary and not error:
        title = f"{title} ({summary})"
    return ToolCallInfo(
        tool_use_id=use.id,
        tool=use.name,
        title=title,
        status=status,
        summary=summary,
        path=path,
        diff=diff,
    )


def with_tool_calls(
    messages: Sequence[Message], running: bool = False, among: Sequence[Message] | None = None
) -> list[Message]:
    """`messages`, each one holding tool_use blocks copied with its `toolCalls` (the results
    looked up in `among` when given: a page's calls may be answered after it)."""
    results = {
        r.tool_use_id: r for m in (messages if among is None else among) for r in m.tool_results()
    }
    out: list[Message] = []
    for message in messages:
        uses = message.tool_uses()
        if not uses:
            out.append(message)
            continue
        calls = [call_info(u, results.get(u.id), running) for u in uses]
        out.append(message.model_copy(update={"tool_calls": calls}))
    return out
