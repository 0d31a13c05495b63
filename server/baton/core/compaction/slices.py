"""Long texts worked in slices, so that no single C call holds the GIL for long.

A compaction runs in a worker thread while the event loop answers other sessions, but
Python's lock is taken by a C call (a `str.split`, a regex search) for the call's whole
length: over a 20 MB message one such call stops every other thread for a quarter of a
second. The functions here give the same answers as the single calls they replace,
working on about `SLICE_CHARS` characters per call (twice that at most), so that the
interpreter can hand the lock on between two of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

SLICE_CHARS = 256 * 1024  # characters per C call: about a millisecond of work
NORMALIZE_CHARS = 16 * 1024  # `normalize`'s pieces (the words of one are held at once)
_SPACE = re.compile(r"\s")
_TWO_WORD_CHARACTERS = re.compile(r"\S\S")  # a cut between them is inside a word
# a cut between them is inside a line (what `str.splitlines` breaks at is left out)
_TWO_LINE_CHARACTERS = re.compile("[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]{2}")


def normalize(text: str) -> str:
    """`" ".join(text.split())`, a piece at a time: the text is cut only at a white space
    character (`str.split`'s white space), so the words of the pieces are the text's. A
    piece is at most `NORMALIZE_CHARS` (and `SLICE_CHARS`) long but for a longer word, so
    that the words held at once (a string object each, ~60 bytes for a word of a few
    letters) are a piece's, never a whole summary's."""
    size = min(SLICE_CHARS, NORMALIZE_CHARS)
    if len(text) <= size:
        return " ".join(text.split())
    return " ".join(list(normalized_parts(text)))


def normalized_parts(text: str) -> Iterator[str]:
    """`normalize(text)` in order, in the parts that `" ".join` puts together into it: a
    reader that needs only its start, or a digest of it, never holds it whole."""
    for piece in _at_spaces(text, min(SLICE_CHARS, NORMALIZE_CHARS)):
        part = " ".join(piece.split())
        if part:
            yield part


_WORD = re.compile(r"\S+")  # `str.split`'s words (its white space is `\s`'s)


def first_words(texts: Iterable[str], chars: int) -> str:
    """The start of `" ".join(" ".join(texts).split())`, at least `chars` + 1 characters of
    it when it is that long (enough to tell that it is longer): the words of a long text
    are read only as far as that start, never split whole (a preview of a 50 MB message
    made millions of words to show sixty characters)."""
    words: list[str] = []
    length = -1
    for text in texts:
        for word in _WORD.finditer(text):
            words.append(word.group())
            length += len(words[-1]) + 1
            if length > chars:
                return " ".join(words)
    return " ".join(words)


def _at_spaces(text: str, size: int) -> Iterator[str]:
    """`text` in consecutive pieces of about `size` characters, each (but the last)
    followed by a white space character that starts the next one."""
    start, end = 0, len(text)
    while end - start > size:
        cut = start + size
        found = _SPACE.search(text, cut, min(cut + size, end))
        while found is None and cut + size < end:  # a very long word
            cut += size
            found = _SPACE.search(text, cut, min(cut + size, end))
        if found is None:
            break
        yield text[start : found.start()]
        start = found.start()
    yield text[start:]


def search(pattern: re.Pattern[str], text: str, reach: int) -> re.Match[str] | None:
    """`pattern.search(text)`, a slice at a time, for a pattern whose matches are at most
    `reach` characters long and that looks at nothing after its match (a look-behind
    may: `pos` does not cut the string, it only says where the search begins). A slice's
    search reaches `reach` characters past it, and only a match that starts within the
    slice is taken, so each match is tried on as much text as the whole search gives it."""
    if len(text) <= SLICE_CHARS:
        return pattern.search(text)
    for start in range(0, len(text), SLICE_CHARS):
        end = start + SLICE_CHARS
        found = pattern.search(text, start, min(end + reach, len(text)))
        if found is not None and found.start() < end:
            return found
    return None


def lines(text: str) -> list[str]:
    """`text.splitlines()`, a piece at a time: the text is cut between two characters
    that are not line breaks (`str.splitlines`'s), each piece is split on its own, and the
    line each cut went through is joined back together."""
    if len(text) <= SLICE_CHARS:
        return text.splitlines()
    return _joined_at_cuts(str.splitlines, _pieces(text, SLICE_CHARS, _TWO_LINE_CHARACTERS))


def split(pattern: re.Pattern[str], text: str) -> list[str]:
    """`pattern.split(text)` for a pattern without groups that matches white space only
    and looks at most one character before and after its match: the text is cut between
    two characters that are not white space (no match covers such a cut, none looks
    across it), each piece is split on its own, and the part each cut went through is
    joined back together."""
    if len(text) <= SLICE_CHARS:
        return pattern.split(text)
    return _joined_at_cuts(pattern.split, _pieces(text, SLICE_CHARS, _TWO_WORD_CHARACTERS))


def _joined_at_cuts(split_one: Callable[[str], list[str]], pieces: Iterable[str]) -> list[str]:
    """The parts of consecutive pieces, split one by one, the last part of each piece
    joined to the first of the next (a cut is never where the whole text splits)."""
    parts: list[str] = []
    open_part: list[str] = []  # the pieces of the part that runs on into the next piece
    for piece in pieces:
        split_piece = split_one(piece)
        open_part.append(split_piece[0])
        if len(split_piece) > 1:
            parts.append("".join(open_part))
            parts.extend(split_piece[1:-1])
            open_part = [split_piece[-1]]
    parts.append("".join(open_part))
    return parts


def _pieces(text: str, size: int, pair: re.Pattern[str]) -> Iterator[str]:
    """`text` in consecutive pieces of about `size` characters, each (but the last) cut
    between the two characters of a match of `pair`."""
    start, end = 0, len(text)
    while end - start > size:
        cut = start + size
        found = pair.search(text, cut, min(cut + size, end))
        while found is None and cut + size < end:  # a long run without such a pair
            cut += size
            found = pair.search(text, cut, min(cut + size, end))
        if found is None:
            break
        yield text[start : found.start() + 1]
        start = found.start() + 1
    yield text[start:]
