"""A session's view as a Markdown document, and where each message sits in it.

Each message renders to a piece of its own, kept with the rendering: the next rendering
reuses every piece whose message is unchanged, and after an append (the view only grew)
it renders the new messages alone and takes the earlier sections as they are, since the
header is always the same three lines.
"""

from __future__ import annotations

import json
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, overload

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
from baton.protocol import MessageRange, Position, Range

USAGE_LINE = 0  # the line the usage diagnostic and the usage hover sit on
ROLE_TITLES = {"user": "User", "assistant": "Assistant"}
KIND_TITLES = {"message": "message", "summary": "summary", "attachment": "attachment"}


@dataclass(frozen=True, slots=True)
class Section:
    """Where one message sits: inclusive line numbers, and the last line's width."""

    message_id: str
    start_line: int
    end_line: int
    end_character: int
    heading_character: int = 0  # the width of its first line (the heading)

    def contains_line(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line


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


class Sections(Sequence[Section]):
    """The sections of a rendering, each made when asked for from its piece and the line
    it starts on: a rendering keeps one machine int per message (`starts`) rather than a
    section object and its line numbers (~150 bytes a message)."""

    __slots__ = ("_pieces", "_starts")

    def __init__(self, pieces: Sequence[Piece], starts: Sequence[int]) -> None:
        self._pieces = pieces
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> Section: ...
    @overload
    def __getitem__(self, index: slice) -> list[Section]: ...
    def __getitem__(self, index: int | slice) -> Section | list[Section]:
        if isinstance(index, slice):
            return [self._section(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("section index out of range")
        return self._section(index)

    def _section(self, index: int) -> Section:
        piece, first = self._pieces[index], self._starts[index]
        return Section(
            piece.message.id,
            first,
            first + piece.line_count - 2,  # a piece's first line is the blank before it
            piece.end_character,
            piece.heading_character,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # compared by content, like a list

    def __repr__(self) -> str:
        return f"Sections({list(self)!r})"


@dataclass(frozen=True)
class RenderedSession:
    header: list[str]
    pieces: list[Piece]
    starts: array[int]  # starts[i]: the line pieces[i]'s section starts on (its heading)
    encoding: str = "utf-16"
    messages: list[Message] = field(default_factory=list)  # what it was rendered from

    @cached_property
    def sections(self) -> Sections:
        return Sections(self.pieces, self.starts)

    @cached_property
    def text(self) -> str:
        return "\n".join([*self.header, *(p.text for p in self.pieces)]) + "\n"

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @property
    def usage_line_width(self) -> int:
        return code_units(self.header[USAGE_LINE], self.encoding)

    @cached_property
    def by_id(self) -> dict[str, Section]:
        return {s.message_id: s for s in self.sections}

    def page(self, start: int, stop: int) -> tuple[str, int]:
        """The text of messages [start, stop) (with the header on the first page) and the
        document line it starts on: the pages of a view, joined in order, are `text`."""
        pieces = self.pieces[start:stop]
        if not pieces:
            end = self.sections[-1].end_line + 1 if self.sections else len(self.header)
            return ("\n".join(self.header) + "\n", 0) if start == 0 else ("", end)
        head = self.header if start == 0 else []
        first_line = 0 if start == 0 else self.starts[start] - 1
        return "\n".join([*head, *(p.text for p in pieces)]) + "\n", first_line

    def ranges(self, start: int = 0, stop: int | None = None) -> list[MessageRange]:
        return [
            MessageRange(
                message_id=s.message_id,
                range=Range(
                    start=Position(line=s.start_line, character=0),
                    end=Position(line=s.end_line, character=s.end_character),
                ),
            )
            for s in self.sections[start:stop]
        ]

    def section_at(self, line: int) -> Section | None:
        index = bisect_right(self.starts, line) - 1
        if index >= 0 and self.sections[index].contains_line(line):
            return self.sections[index]
        return None

    def sections_between(self, first_line: int, last_line: int) -> list[Section]:
        """Every section that shares a line with [first_line, last_line]."""
        start = max(0, bisect_right(self.starts, first_line) - 1)
        stop = bisect_right(self.starts, last_line)
        return [
            s
            for s in self.sections[start:stop]
            if s.start_line <= last_line and s.end_line >= first_line
        ]


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


def render_session(
    title: str,
    session_id: str,
    model: str,
    messages: Sequence[Message],
    encoding: str = "utf-16",
    previous: RenderedSession | None = None,
    *,
    grown: bool = False,
) -> RenderedSession:
    """The document; `previous` (a rendering of this session in the same encoding) lends
    its pieces. `grown`: nothing shown of the earlier messages changed since `previous`
    (only appends), so when its messages begin the view they are not looked at again."""
    count = len(messages)
    header = header_lines(title, session_id, model, count)
    if previous is not None and previous.encoding != encoding:
        previous = None
    pieces: list[Piece] = []
    starts: array[int] = array("q")
    start = 0
    if previous is not None and grown:
        kept = len(previous.pieces)
        if kept and kept <= count and previous.messages == list(messages[:kept]):
            pieces, starts, start = list(previous.pieces), array("q", previous.starts), kept
    known = {p.message.id: p for p in previous.pieces} if previous and not start else {}
    # the line after the last kept section (each section ends a line before the next piece)
    line = starts[-1] + pieces[-1].line_count - 1 if starts else len(header)
    for message in messages[start:]:
        piece = known.get(message.id)
        if piece is None or piece.message is not message or piece.key != _key(message):
            piece = _piece(message, encoding)
        pieces.append(piece)
        starts.append(line + 1)  # each piece begins with a blank line
        line += piece.line_count
    return RenderedSession(header, pieces, starts, encoding, list(messages))


def header_lines(title: str, session_id: str, model: str, count: int) -> list[str]:
    """The document's first lines (the usage line first): the same whatever the messages
    say, so an append never moves a section."""
    return [
        f"# {_one_line(title) or 'Conversation'}",
        "",
        f"_Session {session_id} · {model or 'default model'} · "
        f"{count} message{'s' if count != 1 else ''} in the model's view_",
    ]


class LazyRendering:
    """A session's document as diagnostics read it: the header now, the sections made
    (`make`, a rendering) only when a hint or a warning first points at a message. A
    session whose messages need none is never rendered for its diagnostics, so a session
    no client reads the document of holds no pieces (~120 bytes a message)."""

    def __init__(self, header: list[str], make: Callable[[], RenderedSession]) -> None:
        self.header = header
        self._make = make
        self._made: RenderedSession | None = None

    @property
    def by_id(self) -> dict[str, Section]:
        if self._made is None:
            self._made = self._make()
        return self._made.by_id


def _key(message: Message) -> tuple[Any, ...]:
    return (message.role, message.kind, message.tokens, message.pinned, message.stop_reason)


def _piece(message: Message, encoding: str) -> Piece:
    key = _key(message)
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
    parts = [ROLE_TITLES.get(role, role), KIND_TITLES.get(kind, kind), message_id]
    parts.append(f"{tokens:,} tokens")
    if pinned:
        parts.append("pinned")
    if stop_reason == "interrupted":
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
