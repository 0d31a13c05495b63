"""How one message reads in the session document: its piece (heading, body, fenced blocks)
and the widths the document's positions are counted in."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from baton.core.conversation.messages import (
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
from baton.lsp.session_document.open_blocks import closed_blocks

ROLE_TITLES = {"user": "User", "assistant": "Assistant"}
KIND_TITLES = {"message": "message", "summary": "summary", "attachment": "attachment"}


@dataclass(frozen=True, slots=True)
class Piece:
    """One message's place in the document and what it is rendered from.

    Its text is rendered again from the message and `key` when first asked for, and kept
    from then on: the diagnostics of every change need only the counts, and a session no
    client reads the document of does not hold a second copy of its text.
    """

    message: Message
    # what the heading shows besides the message's identity, as it was when made (`key`)
    role: str
    kind: str
    tokens: int
    pinned: bool
    stop_reason: str | None
    line_count: int
    end_character: int
    heading_character: int
    _text: str | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.role, self.kind, self.tokens, self.pinned, self.stop_reason)

    @property
    def text(self) -> str:
        if self._text is None:  # the one change a piece sees: its text, made once
            object.__setattr__(self, "_text", "\n".join(_lines(self.message, self.key)))
        assert self._text is not None
        return self._text


def code_units(text: str, encoding: str = "utf-16") -> int:
    """The width of `text` in the position encoding the client and server agreed on."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32" or text.isascii():
        return len(text)
    # a character past U+FFFF is two UTF-16 code units, any other one (a lone surrogate
    # too, written as itself) is one: the encoded length, without a Python loop per
    # character (a 20 MB line would hold the event loop for seconds)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def message_key(message: Message) -> tuple[Any, ...]:
    return (message.role, message.kind, message.tokens, message.pinned, message.stop_reason)


def make_piece(message: Message, encoding: str) -> Piece:
    key = message_key(message)
    lines = _lines(message, key)
    role, kind, tokens, pinned, stop_reason = key
    return Piece(
        message,
        role,
        kind,
        tokens,
        pinned,
        stop_reason,
        line_count=len(lines),
        end_character=code_units(lines[-1], encoding),
        heading_character=code_units(lines[1], encoding),
    )


def _lines(message: Message, key: tuple[Any, ...]) -> list[str]:
    """A piece's lines: its heading as `key` says (a message's pin changes in place; the
    piece shows it as it was when the piece was made), then the message's blocks."""
    lines = ["", _heading(message.id, key)]
    body = _body(message)
    if body:
        lines.append("")
        lines.extend(body)
    return lines


def _heading(message_id: str, key: tuple[Any, ...]) -> str:
    role, kind, tokens, pinned, stop_reason = key
    # an id is one line here whatever it holds: the piece's line count says two lines
    parts = [ROLE_TITLES.get(role, role), KIND_TITLES.get(kind, kind), one_line(message_id)]
    parts.append(f"{tokens:,} tokens")
    if pinned:
        parts.append("pinned")
    if stop_reason == "interrupted":
        parts.append("interrupted")
    return "## " + " · ".join(parts)


def _body(message: Message) -> list[str]:
    # a code fence or an HTML block a text leaves open is closed after it: else it would
    # take in every later message's heading (one section per message)
    return closed_blocks([_block_lines(block) for block in message.content])


def _block_lines(block: object) -> list[str]:
    if isinstance(block, TextBlock):
        return block.text.splitlines() or [""]
    if isinstance(block, ToolUseBlock):
        body = json.dumps(block.input, indent=2, ensure_ascii=False, default=str)
        label = f"**tool_use** `{one_line(block.name)}` ({one_line(block.id)})"
        return [label, *_fenced(body, "json")]
    if isinstance(block, ToolResultBlock):
        label = f"**tool_result** for {one_line(block.tool_use_id)}"
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
        return [f"*[document{': ' + one_line(str(title)) if title else ''}]*"]
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


def one_line(text: str) -> str:
    """`text` for a line the piece counts as one: its runs of white space (line breaks
    among them) each a space."""
    return " ".join(text.split())
