"""Facts a compaction must not lose: user prompts, paths touched, what a model would read."""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from baton.core.compaction import slices
from baton.core.compaction.cuts import CountText as CountText
from baton.core.compaction.cuts import approx_tokens as approx_tokens
from baton.core.compaction.cuts import cut_to_tokens as cut_to_tokens
from baton.core.compaction.cuts import cut_with_marker as cut_with_marker
from baton.core.compaction.cuts import remembered as remembered
from baton.core.conversation.messages import (
    Attachment,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

# CountText, approx_tokens and the cuts live in cuts.py; imported here too, where they were.

_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "notebookPath")
_PATH_LIST_KEYS = ("paths", "files", "file_paths")
_HEADING = re.compile(r"^(#{1,6}\s|\*{0,2}\d{1,2}\.\s)")
_BULLET = re.compile(r"^( *)[-*] (.*)$")


def normalize(text: str) -> str:
    """Whitespace-insensitive form used to decide whether a fact survived (`" ".join(
    text.split())`, a slice at a time over a long text: see `slices`)."""
    return slices.normalize(text)


def unique(values: Sequence[str]) -> dict[str, str]:
    """The values whose normalized form is new, in order, each with that form."""
    seen: set[str] = set()
    out: dict[str, str] = {}
    for value in values:
        key = normalize(value)
        if key and key not in seen:
            seen.add(key)
            out[value] = key
    return out


def unique_heads(values: Sequence[str], chars: int) -> dict[str, str]:
    """`unique`, for facts only ever looked for by the first `chars` characters of their
    normalized form (`found_in`'s `prefix`: prompts): each value's form is held that far,
    and one character more, which tells `found_in` that it goes on; values are told apart
    by their whole forms, a long one's by a digest of it. A prompt may be a pasted log of
    many megabytes: its whole normalized copy would be held for the compaction's length."""
    seen: set[str | bytes] = set()
    out: dict[str, str] = {}
    for value in values:
        head, whole = _head_and_identity(value, chars + 1)
        if head and whole not in seen:
            seen.add(whole)
            out[value] = head
    return out


def _head_and_identity(text: str, chars: int) -> tuple[str, str | bytes]:
    """The first `chars` characters of `normalize(text)`, and what tells that form from any
    other: itself when that is all of it, else a digest of it, made a part at a time."""
    parts = slices.normalized_parts(text)
    head: list[str] = []
    length = -1  # the first part has no space before it
    for part in parts:
        head.append(part)
        length += 1 + len(part)
        if length >= chars:
            break
    else:
        whole = " ".join(head)
        return whole[:chars], whole
    digest = hashlib.blake2b(digest_size=16)
    for part in itertools.chain(head, parts):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b" ")
    return " ".join(head)[:chars], digest.digest()


def result_text(block: ToolResultBlock) -> str:
    """The text a tool_result carries (string content or its text parts)."""
    if isinstance(block.content, str):
        return block.content
    if not block.content:
        return ""
    return "\n".join(
        str(part.get("text", "")) for part in block.content if part.get("type") == "text"
    )


def prompt_texts(messages: Iterable[Message]) -> list[str]:
    """What the user typed, in order: user prompts, never tool results, summaries or attachments."""
    prompts: list[str] = []
    for message in messages:
        if message.is_user_prompt:
            text = message.text().strip()
            if text:
                prompts.append(text)
    return prompts


@dataclass
class PathTouch:
    path: str
    ops: list[str] = field(default_factory=list)


_COMMAND_OPERATIONS = {
    "view": "read",
    "create": "written",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
}
_LONGEST_COMMAND = max(map(len, _COMMAND_OPERATIONS))


def _operation(tool: str, tool_input: dict[str, Any]) -> str:
    # A text editor tool's command names the operation; a shell command is no such word.
    command = tool_input.get("command", "")
    if isinstance(command, str) and len(command) <= _LONGEST_COMMAND:
        op = _COMMAND_OPERATIONS.get(command.lower())
        if op is not None:
            return op
    return _tool_operation(tool)


@functools.lru_cache(maxsize=256)
def _tool_operation(tool: str) -> str:
    """The operation a tool's name says it does (a session uses a handful of tools)."""
    name = tool.lower()
    for needle, op in (
        ("edit", "edited"),
        ("replace", "edited"),
        ("write", "written"),
        ("create", "written"),
        ("read", "read"),
        ("view", "read"),
        ("glob", "searched"),
        ("grep", "searched"),
        ("search", "searched"),
        ("find", "searched"),
    ):
        if needle in name:
            return op
    if name in {"ls", "list", "list_dir", "list_directory"}:
        return "listed"
    return "used"


def tool_paths(use: ToolUseBlock) -> list[tuple[str, str]]:
    """(path, operation) pairs named by one tool call's input."""
    if not isinstance(use.input, dict):
        return []
    found: list[tuple[str, str]] = []
    op = _operation(use.name, use.input)
    for key in _PATH_KEYS:
        value = use.input.get(key)
        if isinstance(value, str) and value.strip():
            found.append((value.strip(), op))
    for key in _PATH_LIST_KEYS:
        values = use.input.get(key)
        if isinstance(values, list):
            found.extend((v.strip(), op) for v in values if isinstance(v, str) and v.strip())
    # A glob pattern names files; a grep pattern is a regular expression, not a path.
    pattern = use.input.get("pattern")
    if "glob" in use.name.lower() and isinstance(pattern, str) and pattern.strip():
        found.append((pattern.strip(), op))
    return found


def attachment_path(message: Message) -> str | None:
    """The file an attachment message restored: its `attachment` field, or for a message
    built without one, the file its first line names."""
    if message.kind != "attachment":
        return None
    attachment = message.attachment or Attachment.from_heading(message.text())
    return attachment.path if attachment is not None else None


def touched_paths(messages: Iterable[Message]) -> list[PathTouch]:
    """Every path a tool call or attachment touched, in first-seen order, with its operations."""
    touches: dict[str, PathTouch] = {}

    def note(path: str, op: str) -> None:
        touch = touches.setdefault(path, PathTouch(path))
        if op not in touch.ops:
            touch.ops.append(op)

    for message in messages:
        restored = attachment_path(message)
        if restored is not None:
            note(restored, "restored")
        for use in message.tool_uses():
            for path, op in tool_paths(use):
                note(path, op)
    return list(touches.values())


def message_haystack(messages: Iterable[Message]) -> str:
    """Everything a model would read in these messages, normalized, for survival checks."""
    parts: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.extend(_strings(block.input))
            elif isinstance(block, ToolResultBlock):
                parts.append(result_text(block))
    return normalize("\n".join(parts))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def split_summary_prompts(summary_text: str) -> tuple[list[str], str]:
    """The user prompts an earlier summary carried, and the rest of its text.

    Prompts are the bullet items under every heading that names "user messages" (the
    summary's own section and any fact ledger appended to it).
    """
    lines = summary_text.splitlines()
    items: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not (_HEADING.match(line) and "user messages" in line.lower()):
            rest.append(line)
            continue
        block: list[str] = []
        while index < len(lines) and not _HEADING.match(lines[index]):
            block.append(lines[index])
            index += 1
        items.extend(bullet_items(block))
    return items, "\n".join(rest)


def summary_prompts(summary_text: str) -> list[str]:
    return split_summary_prompts(summary_text)[0]


def bullet_items(block: Sequence[str]) -> list[str]:
    """Bullets at the indentation of the first one; deeper or unbulleted lines continue
    the current item (continuation lines are indented when Baton writes them), up to a
    paragraph after a blank line that is no deeper than the bullets: the list ended."""
    items: list[list[str]] = []
    indent: int | None = None
    blank = False
    for line in block:
        match = _BULLET.match(line)
        if match and (indent is None or len(match.group(1)) == indent):
            indent = len(match.group(1))
            items.append([match.group(2)])
        elif items and indent is not None:
            if blank and line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            items[-1].append(_dedent(line, indent + 2))
        blank = not line.strip()
    return ["\n".join(parts).strip() for parts in items if "".join(parts).strip()]


def _dedent(line: str, width: int) -> str:
    stripped = line.lstrip(" ")
    return line[min(width, len(line) - len(stripped)) :]
