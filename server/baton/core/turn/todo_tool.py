"""The todo tool the model may call (TodoWrite's shape: items with content, status and active
form), run by the server: a pure function of the session's messages and its input.

A tool of the registry is (definition, default level, kind, run): `DEFINITION`, `LEVEL`,
`KIND` and `run`. The list itself lives in the call's input, stored in the transcript like
any tool call; after a compaction its open items come back (`working_set/plan_todos.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from baton.core.compaction.working_set.plan_todos import (
    STATUSES,
    TODO_TOOL,
    TodoInputError,
    TodoItem,
    latest_todos,
    parse_todos,
)
from baton.core.conversation.messages import Message
from baton.core.settings import Level
from baton.core.tools.host import ToolKind
from baton.core.tools.registry import Tool, ToolContext, ToolResult

__all__ = ["DEFINITION", "KIND", "LEVEL", "TOOL", "TodoInputError", "run", "todo_write"]

LEVEL: Level = "auto"
KIND: ToolKind = "other"
MAX_ITEMS = 100
DEFINITION: dict[str, Any] = {
    "name": TODO_TOOL,
    "description": (
        "Write the task list for the current work: the whole list each time, every item "
        "with what to do (content), its status (pending, in_progress or completed) and the "
        "same in the present continuous (activeForm, shown while it is in progress). Use it "
        "for work of three steps or more; keep one item in_progress at a time and mark an "
        "item completed as soon as it is done. The open items are kept across compactions."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1},
                    },
                    "required": ["content", "status", "activeForm"],
                },
            }
        },
        "required": ["todos"],
    },
}


def todo_write(messages: Sequence[Message], tool_input: dict[str, Any]) -> str:
    """The result the model reads for a TodoWrite call with `tool_input`, given the
    session's messages before it (the list they hold is the one replaced). Bad input
    raises TodoInputError with what is wrong; nothing is kept from it."""
    if not isinstance(tool_input, dict):
        raise TodoInputError("the input must be an object with a todos list")
    items = parse_todos(tool_input.get("todos"))
    if len(items) > MAX_ITEMS:
        raise TodoInputError(f"at most {MAX_ITEMS} items, got {len(items)}")
    before = latest_todos(messages) or []
    counts = {status: sum(1 for i in items if i.status == status) for status in STATUSES}
    lines = [
        f"Task list saved: {len(items)} items ({counts['completed']} completed, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending)."
    ]
    lines += _changes(before, items)
    if counts["in_progress"] > 1:
        lines.append("Note: more than one item is in progress; keep one at a time.")
    current = next((i for i in items if i.status == "in_progress"), None)
    if current is not None:
        lines.append(f"Now: {current.active_form or current.content}")
    return "\n".join(lines)


def _changes(before: Sequence[TodoItem], after: Sequence[TodoItem]) -> list[str]:
    old = {item.content: item.status for item in before}
    lines: list[str] = []
    for item in after:
        was = old.get(item.content)
        if was is None and before:
            lines.append(f"Added: {item.content}")
        elif was is not None and was != item.status:
            lines.append(f"{item.content}: {was} -> {item.status}")
    kept = {item.content for item in after}
    lines += [f"Removed: {item.content}" for item in before if item.content not in kept]
    return lines


async def run(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """The registry's entry: the list saved, or why the input was refused (told to the
    model, nothing kept)."""
    try:
        text = todo_write(ctx.messages(), tool_input)
    except TodoInputError as exc:
        return ToolResult(f"Error: {exc}", is_error=True, summary=str(exc), status="failed")
    items = tool_input.get("todos")
    return ToolResult(text, summary=f"{len(items)} items" if isinstance(items, list) else None)


TOOL = Tool(DEFINITION, LEVEL, KIND, run, title=lambda _input: "Update the task list")
"""The todo tool as the server's tool loop registers it (beside the workspace tools)."""
