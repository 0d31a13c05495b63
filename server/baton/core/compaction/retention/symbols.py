"""The names of the symbols a span edited, read from its edit tool calls' inputs (the new
text of Edit, MultiEdit, Write and the text editor tool), and carried by a summary's line."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from baton.core.compaction.retention.blocks import is_prompt
from baton.core.compaction.retention.summary_facts import summary_text
from baton.core.conversation.messages import Message, ToolUseBlock

SYMBOLS_LABEL = "Symbols edited:"
MAX_SYMBOLS = 2_000  # the newest kept when more (a few tokens each)
# The input keys that hold the text an edit wrote (and the one it replaced).
_NEW_TEXT = ("new_string", "new_str", "newText", "content", "file_text", "new_source")
_OLD_TEXT = ("old_string", "old_str", "oldText")
_DEFINITION = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:def|class|function\*?|fn|func|struct|enum|trait|interface|type|impl|module|"
    r"(?:const|let|var)(?=\s+\w+\s*=\s*(?:async\s*)?(?:\(|function)))"
    r"\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_CARRIED = re.compile(rf"^\s*-?\s*{re.escape(SYMBOLS_LABEL)}\s*(?P<names>.+)$", re.MULTILINE)


def definitions(text: str) -> list[str]:
    """The names `text` defines (functions, classes, methods, types), in order, each once."""
    return list(dict.fromkeys(m.group("name") for m in _DEFINITION.finditer(text)))


def _edit_texts(tool_input: dict[str, Any]) -> Iterable[str]:
    for key in (*_NEW_TEXT, *_OLD_TEXT):
        value = tool_input.get(key)
        if isinstance(value, str):
            yield value
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                yield from _edit_texts(edit)


def _is_edit(block: ToolUseBlock) -> bool:
    name = block.name.lower()
    if any(word in name for word in ("edit", "write", "replace", "create")):
        return True
    command = block.input.get("command") if isinstance(block.input, dict) else None
    return command in {"str_replace", "create", "insert"}


def edited_symbols(messages: Sequence[Message]) -> list[str]:
    """The symbols the span's edits defined or changed, and those earlier summaries carried."""
    found: dict[str, None] = {}
    for message in messages:
        earlier = summary_text(message) if not is_prompt(message) else None
        if earlier is not None:
            for name in read_symbols(earlier):
                found.setdefault(name)
            continue
        for block in message.content:
            if type(block) is ToolUseBlock and isinstance(block.input, dict) and _is_edit(block):
                for text in _edit_texts(block.input):
                    for name in definitions(text):
                        found.setdefault(name)
    return list(found)[-MAX_SYMBOLS:]


def symbols_line(symbols: Sequence[str]) -> str:
    """The line a summary's files section carries them in ("" when there is none)."""
    if not symbols:
        return ""
    return f"- {SYMBOLS_LABEL} " + ", ".join(f"`{name}`" for name in symbols)


def read_symbols(text: str) -> list[str]:
    """The names an earlier summary's `symbols_line` carried."""
    names: list[str] = []
    for match in _CARRIED.finditer(text):
        names += [part.strip().strip("`") for part in match.group("names").split(",")]
    return [name for name in names if name]
