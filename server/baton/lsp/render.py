"""A session's view as a Markdown document, and where each message sits in it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from baton.core.messages import (
    CompactionBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.protocol import MessageRange, Position, Range

USAGE_LINE = 0  # the line the usage diagnostic and the usage hover sit on
ROLE_TITLES = {"user": "User", "assistant": "Assistant"}
KIND_TITLES = {"message": "message", "summary": "summary", "attachment": "attachment"}


@dataclass(frozen=True)
class Section:
    """Where one message sits: inclusive line numbers, and the last line's width."""

    message_id: str
    start_line: int
    end_line: int
    end_character: int

    def contains_line(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line


@dataclass(frozen=True)
class RenderedSession:
    text: str
    sections: list[Section]

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def ranges(self) -> list[MessageRange]:
        return [
            MessageRange(
                message_id=s.message_id,
                range=Range(
                    start=Position(line=s.start_line, character=0),
                    end=Position(line=s.end_line, character=s.end_character),
                ),
            )
            for s in self.sections
        ]

    def section_at(self, line: int) -> Section | None:
        for section in self.sections:
            if section.contains_line(line):
                return section
        return None

    def sections_between(self, first_line: int, last_line: int) -> list[Section]:
        """Every section that shares a line with [first_line, last_line]."""
        return [s for s in self.sections if s.start_line <= last_line and s.end_line >= first_line]


def code_units(text: str, encoding: str = "utf-16") -> int:
    """The width of `text` in the position encoding the client and server agreed on."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def render_session(
    title: str,
    session_id: str,
    model: str,
    messages: Sequence[Message],
    encoding: str = "utf-16",
) -> RenderedSession:
    lines: list[str] = [f"# {_one_line(title) or 'Conversation'}", ""]
    count = len(messages)
    lines.append(
        f"_Session {session_id} · {model or 'default model'} · "
        f"{count} message{'s' if count != 1 else ''} in the model's view_"
    )
    sections: list[Section] = []
    for message in messages:
        lines.append("")
        start = len(lines)
        lines.append(heading(message))
        body = _body(message)
        if body:
            lines.append("")
            lines.extend(body)
        end = len(lines) - 1
        sections.append(Section(message.id, start, end, code_units(lines[end], encoding)))
    return RenderedSession("\n".join(lines) + "\n", sections)


def heading(message: Message) -> str:
    parts = [
        ROLE_TITLES.get(message.role, message.role),
        KIND_TITLES.get(message.kind, message.kind),
        message.id,
        f"{message.tokens:,} tokens",
    ]
    if message.pinned:
        parts.append("pinned")
    if message.stop_reason == "interrupted":
        parts.append("interrupted")
    return "## " + " · ".join(parts)


def _body(message: Message) -> list[str]:
    out: list[str] = []
    for block in message.content:
        if out:
            out.append("")
        out.extend(_block_lines(block))
    return out


def _block_lines(block: object) -> list[str]:
    if isinstance(block, TextBlock):
        return block.text.splitlines() or [""]
    if isinstance(block, ToolUseBlock):
        body = json.dumps(block.input, indent=2, ensure_ascii=False, default=str)
        return [f"**tool_use** `{block.name}` ({block.id})", *_fenced(body, "json")]
    if isinstance(block, ToolResultBlock):
        label = f"**tool_result** for {block.tool_use_id}"
        if block.is_error:
            label += " (error)"
        return [label, *_fenced(_result_text(block), "")]
    if isinstance(block, ThinkingBlock):
        return ["*thinking*", *(f"> {line}" for line in block.thinking.splitlines())]
    if isinstance(block, RedactedThinkingBlock):
        return ["*[redacted thinking]*"]
    if isinstance(block, CompactionBlock):
        return ["*summary written by the API*", "", *(block.content or "").splitlines()]
    if isinstance(block, ImageBlock):
        return ["*[image]*"]
    if isinstance(block, DocumentBlock):
        title = getattr(block, "title", None)
        return [f"*[document{': ' + _one_line(str(title)) if title else ''}]*"]
    return [f"*[{getattr(block, 'type', 'block')}]*"]


def _result_text(block: ToolResultBlock) -> str:
    content = block.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for item in content:
        if item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        else:
            parts.append(f"[{item.get('type', 'block')}]")
    return "\n".join(parts)


_BACKTICKS = re.compile(r"`{3,}")


def _fenced(text: str, language: str) -> list[str]:
    """A code fence longer than any backtick run inside `text`, so the text cannot close it."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return [fence + language, *text.splitlines(), fence]


def _one_line(text: str) -> str:
    return " ".join(text.split())
