"""The task list and the plan that come back after a compaction: the latest TodoWrite call's
open items (pending, in progress), or those of Claude Code 2.1's TaskCreate and TaskUpdate
calls, and the latest plan-mode plan (ExitPlanMode's `plan`),
read from every message the session holds and put back verbatim as one attachment message
right after the summary, before the kept messages."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from baton.core.compaction.retention.facts import result_text
from baton.core.conversation.invariants import leads_with_compaction
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock, text_message

TODO_TOOL = "TodoWrite"
TASK_CREATE, TASK_UPDATE = "TaskCreate", "TaskUpdate"  # Claude Code 2.1's task list
_CREATED = re.compile(r"Task #(\S+?) created")  # what a TaskCreate call's result says
PLAN_TOOL = "ExitPlanMode"
Status = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed")
OPEN: frozenset[str] = frozenset({"pending", "in_progress"})
HEADING = "Task list and plan, restored after a compaction (verbatim)"


@dataclass(frozen=True)
class TodoItem:
    """One item of a TodoWrite list: what to do, its status, and its active form."""

    content: str
    status: Status
    active_form: str = ""

    def as_input(self) -> dict[str, str]:
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


# the ids of the calls that wrote a task list (one TodoWrite, or Claude Code's task calls)
TodoCalls = tuple[tuple[str, ...], list["TodoItem"]]


class TodoInputError(ValueError):
    """A TodoWrite input that is not a list of items with content, status and activeForm."""


def parse_todos(value: Any) -> list[TodoItem]:
    """The items of a TodoWrite input's `todos`, checked; TodoInputError says what is wrong."""
    if not isinstance(value, list):
        raise TodoInputError("todos must be a list of items")
    items: list[TodoItem] = []
    for index, raw in enumerate(value, start=1):
        if not isinstance(raw, dict):
            raise TodoInputError(f"item {index} must be an object")
        content, status = raw.get("content"), raw.get("status")
        active = raw.get("activeForm", "")
        if not isinstance(content, str) or not content.strip():
            raise TodoInputError(f"item {index} needs a non-empty content")
        if status not in STATUSES:
            raise TodoInputError(f"item {index} has status {status!r}: use one of {STATUSES}")
        if not isinstance(active, str):
            raise TodoInputError(f"item {index}: activeForm must be a string")
        items.append(TodoItem(content, status, active))
    return items


def _failed_calls(messages: Sequence[Message]) -> set[str]:
    return {
        block.tool_use_id
        for message in messages
        for block in message.content
        if type(block) is ToolResultBlock and block.is_error
    }


def latest_todos(messages: Sequence[Message]) -> list[TodoItem] | None:
    """The list the latest well-formed TodoWrite call wrote (None when there was none); a
    call whose result is an error (refused, denied, interrupted) wrote nothing."""
    latest = latest_todo_call(messages)
    return latest[1] if latest else None


def latest_todo_call(messages: Sequence[Message]) -> TodoCalls | None:
    """The latest task list: the one the latest well-formed TodoWrite call that did not
    fail wrote, or the one Claude Code 2.1's TaskCreate and TaskUpdate calls made since
    (`ClaudeTasks`): the ids of the calls that wrote it, and its items."""
    failed = _failed_calls(messages)
    latest: TodoCalls | None = None
    tasks: ClaudeTasks | None = None
    for message in messages:
        for block in message.content:
            if type(block) is not ToolUseBlock or block.id in failed:
                continue
            if block.name == TODO_TOOL:
                raw = block.input.get("todos") if isinstance(block.input, dict) else None
                try:
                    latest, tasks = ((block.id,), parse_todos(raw)), None
                except TodoInputError:
                    continue
            elif block.name in (TASK_CREATE, TASK_UPDATE):
                tasks = tasks or ClaudeTasks(messages)
                if tasks.take(block):
                    latest = tasks.latest()
    return latest


class ClaudeTasks:
    """Claude Code 2.1's task list, as its TaskCreate calls (a subject, an active form: task
    #N, as the call's result names it, else numbered in order) and TaskUpdate calls (a
    task's status, `deleted` taking it out, or its subject) wrote it."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._answers = {r.tool_use_id: r for m in messages for r in m.tool_results()}
        self._items: dict[str, TodoItem] = {}
        self._calls: dict[str, list[str]] = {}  # a task -> the calls that wrote it
        self._made = 0

    def take(self, use: ToolUseBlock) -> bool:
        """Take in one call (answered, not failed); whether it changed the list."""
        given: dict[str, Any] = use.input if isinstance(use.input, dict) else {}
        if use.name == TASK_CREATE:
            subject = given.get("subject")
            if not isinstance(subject, str) or not subject.strip():
                return False
            self._made += 1
            answer = self._answers.get(use.id)
            named = _CREATED.search(result_text(answer)) if answer is not None else None
            key = named.group(1) if named else str(self._made)
            active = given.get("activeForm")
            self._items[key] = TodoItem(
                subject, "pending", active if isinstance(active, str) else ""
            )
            self._calls[key] = [use.id]
            return True
        key = str(given.get("taskId", ""))
        item = self._items.get(key)
        if item is None:
            return False
        status, subject = given.get("status"), given.get("subject")
        if status == "deleted":
            del self._items[key], self._calls[key]
            return True
        if status in STATUSES:
            item = TodoItem(item.content, status, item.active_form)
        if isinstance(subject, str) and subject.strip():
            item = TodoItem(subject, item.status, item.active_form)
        self._items[key] = item
        self._calls[key].append(use.id)
        return True

    def all_done(self) -> bool:
        items = self._items.values()
        return bool(items) and all(item.status == "completed" for item in items)

    def latest(self) -> TodoCalls:
        calls = tuple(call for key in self._items for call in self._calls[key])
        return calls, list(self._items.values())


def latest_plan(messages: Sequence[Message]) -> str | None:
    """The latest plan-mode plan the user did not reject (its call's result is no error),
    unless it is done: a task list written since had every item completed."""
    latest = latest_plan_call(messages)
    return latest[1] if latest else None


def latest_plan_call(messages: Sequence[Message]) -> tuple[str, str] | None:
    """The latest plan-mode call the user did not reject and whose work is not done (no
    task list written after it was all completed, nor a Claude Code task call that left
    every task completed): its id and its plan."""
    failed = _failed_calls(messages)
    plan: tuple[str, str] | None = None
    tasks: ClaudeTasks | None = None
    for message in messages:
        for block in message.content:
            if type(block) is not ToolUseBlock or block.id in failed:
                continue
            if block.name == PLAN_TOOL:
                text = block.input.get("plan") if isinstance(block.input, dict) else None
                if isinstance(text, str) and text.strip():
                    plan = block.id, text
            elif block.name == TODO_TOOL and plan is not None and _all_done(block.input):
                plan = None  # its list was worked through: a new task is no part of it
            elif block.name in (TASK_CREATE, TASK_UPDATE):  # Claude Code 2.1's list
                tasks = tasks or ClaudeTasks(messages)
                if tasks.take(block) and plan is not None and tasks.all_done():
                    plan = None
    return plan


def _all_done(tool_input: Any) -> bool:
    try:
        items = parse_todos(tool_input.get("todos") if isinstance(tool_input, dict) else None)
    except TodoInputError:
        return False
    return bool(items) and all(item.status == "completed" for item in items)


def continuity_text(todos: Sequence[TodoItem] | None, plan: str | None) -> str | None:
    """The attachment's text, or None when there is no open item and no plan."""
    open_items = [item for item in todos or () if item.status in OPEN]
    if not open_items and plan is None:
        return None
    parts = [HEADING]
    if plan is not None:
        parts.append(f"### Plan (from plan mode)\n{plan}")
    if open_items:
        done = len(todos or ()) - len(open_items)
        lines = [f"- [{item.status}] {item.content}" for item in open_items]
        note = f" ({done} completed not shown)" if done else ""
        parts.append(f"### Open task list{note}\n" + "\n".join(lines))
    return "\n\n".join(parts)


# the latest task list's calls (their ids and its list) and plan's call (its id and plan)
LatestCalls = tuple[TodoCalls | None, tuple[str, str] | None]


def latest_calls(messages: Sequence[Message]) -> LatestCalls:
    """`latest_todo_call` and `latest_plan_call` of the session's messages (every one it
    holds, in order)."""
    return latest_todo_call(messages), latest_plan_call(messages)


def continuity_attachment(latest: LatestCalls, shown: Sequence[Message] = ()) -> Message | None:
    """The attachment message for the `latest_calls` of the session's messages, without
    the list or plan whose call is among the messages `shown` (kept verbatim)."""
    calls = {use.id for message in shown for use in message.tool_uses()}
    todos, plan = latest
    text = continuity_text(
        todos[1] if todos and not calls.issuperset(todos[0]) else None,
        plan[1] if plan and plan[0] not in calls else None,
    )
    if text is None:
        return None
    return text_message("user", text, "attachment")


def is_continuity(message: Message) -> bool:
    """Whether `message` is such an attachment (a later compaction makes a fresh one)."""
    return message.kind == "attachment" and message.text().startswith(HEADING)


def place_after_summary(view: list[Message], after: Message, message: Message) -> list[Message]:
    """`view` with `message` right after `after` (the summary: before the pinned and kept
    messages that follow it)."""
    at = next(i for i, m in enumerate(view) if m.id == after.id) + 1
    return [*view[:at], message, *view[at:]]


def with_plan_and_todos(
    latest: LatestCalls,
    summary: Message,
    view: list[Message],
    attachments: list[Message],
    count_message: Callable[[Message], int],
) -> tuple[list[Message], list[Message]]:
    """The view and attachments of a compaction with the latest open task list and plan of
    the session's held messages (their `latest_calls`) put back (each unless its call is in
    the view, kept): right after Baton's summary, or after the kept messages when the API's
    signed block must be followed by the kept turns (beside the note placed for it)."""
    carried = continuity_attachment(latest, shown=[m for m in view if m.id != summary.id])
    if carried is None:
        return view, attachments
    carried = carried.model_copy(update={"tokens": count_message(carried)})
    after = summary
    if leads_with_compaction(summary) and attachments:  # beside the note that follows it
        after = attachments[-1]
    return place_after_summary(view, after, carried), [carried, *attachments]
