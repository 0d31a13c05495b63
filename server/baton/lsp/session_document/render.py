"""A session's view as a Markdown document, and where each message sits in it.

Each message renders to a piece of its own, kept with the rendering: the next rendering
reuses every piece whose message is unchanged, and after an append (the view only grew)
it renders the new messages alone and takes the earlier sections as they are, since the
header is always the same three lines.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import overload

from baton.core.conversation.messages import Message
from baton.lsp.session_document.markdown import (
    Piece,
    code_units,
    make_piece,
    message_key,
    one_line,
)
from baton.protocol import MessageRange, Position, Range

USAGE_LINE = 0  # the line the usage diagnostic and the usage hover sit on


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
        if piece is None or piece.message is not message or piece.key != message_key(message):
            piece = make_piece(message, encoding)
        pieces.append(piece)
        starts.append(line + 1)  # each piece begins with a blank line
        line += piece.line_count
    return RenderedSession(header, pieces, starts, encoding, list(messages))


def shown_state(title: str, session_id: str, model: str, messages: Sequence[Message]) -> int:
    """What a rendering shows of a session, as one number: its header's fields and each
    message's id and heading (`message_key`). Two states that give the same number render
    alike (a message's id stands for its content, which never changes)."""
    return hash((title, session_id, model, *((m.id, *message_key(m)) for m in messages)))


def header_lines(title: str, session_id: str, model: str, count: int) -> list[str]:
    """The document's first lines (the usage line first): the same whatever the messages
    say, so an append never moves a section. Always three: each field is made one line (a
    transcript may hold a model name from before names were checked)."""
    return [
        f"# {one_line(title) or 'Conversation'}",
        "",
        f"_Session {one_line(session_id)} · {one_line(model) or 'default model'} · "
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
