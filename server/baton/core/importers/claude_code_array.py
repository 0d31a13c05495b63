"""A Claude Code file written as one JSON array (the variant some tools save): its items
decoded one at a time from a window of the text, for `claude_code_read.records`."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from baton.core.errors import InvalidParams
from baton.core.importers.claude_code_json import has_constant, too_deep
from baton.core.importers.read_fingerprint import Edges

if TYPE_CHECKING:
    from baton.core.importers.claude_code_read import Item, Reading

ARRAY_CHUNK = 4 * 1024 * 1024
_DECODER = json.JSONDecoder()
# what moves the depth of a container's text, and the rest of a string after its quote
_BRACKET_OR_QUOTE = re.compile(r'[\[\]{}"]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def array_items(handle: BinaryIO, path: Path, reading: Reading) -> Iterator[Item]:
    """The items of a JSON array, decoded one at a time from a window of the text (a window
    that ends inside an item grows to twice its size, so reading stays linear). The array
    is taken whole or not at all."""
    window = _Window(handle, path, reading.edges)
    number = 0
    if window.next_char() != "[":
        raise window.invalid("expected '['")
    window.pos += 1
    while True:
        mark = window.next_char()
        if mark == "]":
            window.pos += 1
            if window.next_char() != "":
                raise window.invalid("text after the array")
            reading.taken = window.read_bytes
            return
        if mark == "":
            raise window.invalid("the array does not end")
        if number:
            if mark != ",":
                raise window.invalid(f"expected ',' or ']' after item {number}")
            window.pos += 1
            window.next_char()
        item, piece = window.item()
        number += 1
        if item is not None and (too_deep(piece, item) or has_constant(piece, item)):
            item = None  # an item past the limit is skipped like a broken line
        escaped = "\\ud" in piece or "\\uD" in piece
        yield number, item, window.read_bytes, escaped


class _Window:
    """The part of the array's text not decoded yet, read from the file as needed."""

    def __init__(self, handle: BinaryIO, path: Path, edges: Edges) -> None:
        self.handle, self.path, self.edges = handle, path, edges
        self.text, self.pos = "", 0
        # where the window starts in the file's text: characters, lines, its column
        self.chars, self.lines, self.column = 0, 0, 0
        self.chunk = ARRAY_CHUNK
        self.read_bytes = 0
        self.ended = False
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()  # a leading mark dropped

    def invalid(self, why: str) -> InvalidParams:
        return InvalidParams(f"{self.path.name} is not valid JSON: {why}")

    def more(self) -> None:
        data = self.handle.read(self.chunk)
        self.read_bytes += len(data)
        self.edges.add(data)  # taken whole or not at all: `taken` is set at the end
        self.ended = not data
        try:
            decoded = self.decoder.decode(data, final=self.ended)
        except UnicodeDecodeError:
            raise self.invalid("the file is not UTF-8") from None
        self._moved()
        self.text, self.pos = self.text[self.pos :] + decoded, 0

    def _moved(self) -> None:
        """Counts the text decoded already, which the window is about to let go."""
        newlines = self.text.count("\n", 0, self.pos)
        if newlines:
            self.lines += newlines
            self.column = self.pos - self.text.rfind("\n", 0, self.pos) - 1
        else:
            self.column += self.pos
        self.chars += self.pos

    def broken(self, exc: ValueError) -> InvalidParams:
        """The parser's error, where it is in the file (it names where in the window)."""
        if not isinstance(exc, json.JSONDecodeError):
            return self.invalid(str(exc))
        line = self.lines + exc.lineno
        column = exc.colno + (self.column if exc.lineno == 1 else 0)
        where = f"line {line} column {column} (char {self.chars + exc.pos})"
        return self.invalid(f"{exc.msg}: {where}")

    def next_char(self) -> str:
        """The next character that is not white space ("" at the end), not consumed."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.text) or self.ended:
                return self.text[self.pos : self.pos + 1]
            self.more()

    def item(self) -> tuple[Any, str]:
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except RecursionError:  # deeper than the parser goes: past MAX_DEPTH anyway
                past = _container_end(self.text, self.pos)
                if past is None:  # it goes on past the window (or never ends)
                    if self.ended:
                        raise self.invalid("the array does not end") from None
                    self.chunk = max(self.chunk, 2 * (len(self.text) - self.pos))
                    self.more()
                    continue
                piece = self.text[self.pos : past]
                self.pos = past
                return None, piece  # skipped and reported like a broken line
            except ValueError as exc:
                if self.ended:
                    raise self.broken(exc) from None
                self.chunk = max(self.chunk, 2 * (len(self.text) - self.pos))
                self.more()  # the item may go on past the window
                continue
            if end == len(self.text) and not self.ended:
                self.more()  # a number cut at the window's end would read as a shorter one
                continue
            piece = self.text[self.pos : end]
            self.pos = end
            return value, piece


def _container_end(text: str, start: int) -> int | None:
    """Where the array or object at `start` ends in `text` (None: not within it), found
    without parsing it (one too deep for the parser is skipped, not read): its brackets
    counted, strings passed over whole."""
    depth, at = 0, start
    while (mark := _BRACKET_OR_QUOTE.search(text, at)) is not None:
        at = mark.end()
        if mark[0] == '"':
            rest = _STRING_REST.match(text, at)
            if rest is None:
                return None
            at = rest.end()
        elif mark[0] in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return at
    return None
