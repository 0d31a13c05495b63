"""What a Claude Code record's JSON may be: JSON proper (no NaN or Infinity, which Python's
json reads), nested no deeper than `MAX_DEPTH`."""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json

MAX_DEPTH = 128  # arrays and objects nested in one record (the record itself is one)


class NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON has no such values."""


def refuse_constant(name: str) -> Any:
    raise NotJson(f"{name} is not JSON")


_LINE_DECODER = json.JSONDecoder(parse_constant=refuse_constant)
_NOT_UTF8_START = (b"\xef", b"\xfe", b"\xff", b"\x00")  # a byte order mark, or a NUL
# the first two bytes of a text that may be no UTF-8: one of those first, or a NUL second
# (UTF-16 or -32), told by one look-up
_NOT_UTF8_HEADS = frozenset(
    [*_NOT_UTF8_START]
    + [first + bytes([second]) for first in _NOT_UTF8_START for second in range(256)]
    + [bytes([first]) + b"\x00" for first in range(256)]
)


def loads(text: bytes | str) -> tuple[Any, bool]:
    """`text` as JSON, and whether a string in it may be a lone surrogate (which no
    transcript can hold: `unwritable` says where); ValueError for what is not JSON (NaN
    and Infinity included), including what nests deeper than `MAX_DEPTH` levels or than
    the parser can go.

    UTF-8 bytes (no byte order mark, no UTF-16 or -32) go to pydantic-core's parser
    first: it reads a line in about 60% of the time `json` takes, makes the same values of
    what it accepts, and refuses every lone surrogate, written escaped or as its bytes.
    What it refuses is read as `json.loads` reads it (a surrogate, nesting past its own
    limit), which also says why a broken line is broken. One call does all of it (an
    import makes one for each line of its file)."""
    try:
        if isinstance(text, bytes) and text[:2] not in _NOT_UTF8_HEADS:
            try:
                value, surrogates = from_json(text, allow_inf_nan=False), False
            except ValueError:  # as json.loads reads it, with no decoder made per line
                value = _LINE_DECODER.decode(text.decode("utf-8", "surrogatepass"))
                surrogates = True
        else:
            value, surrogates = json.loads(text, parse_constant=refuse_constant), True
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if too_deep(text, value):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value, surrogates


def too_deep(text: bytes | str, value: Any) -> bool:
    """Whether `value` (parsed from `text`) nests arrays and objects deeper than MAX_DEPTH.
    A text with no more than `FEW_BRACKETS` brackets cannot, which spares nearly every
    record the walk: they are looked for with `find`, which skips the text between them
    at memchr's speed (a count of each bracket looks at every byte, twice: 8% of the
    instructions of an import). The walk visits containers only, never the text of
    strings, a level at a time."""
    opening: tuple[Any, Any] = (b"{", b"[") if isinstance(text, bytes) else ("{", "[")
    brackets = 0
    for bracket in opening:
        at = text.find(bracket)
        while at >= 0:
            brackets += 1
            if brackets > FEW_BRACKETS:
                return _nests_deeper(value)
            at = text.find(bracket, at + 1)
    return False


FEW_BRACKETS = 16  # no more than MAX_DEPTH; more than most records hold


def _nests_deeper(value: Any) -> bool:
    level = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > MAX_DEPTH:
            return True
        below = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, (dict, list)):
                    below.append(child)
        level, depth = below, depth + 1
    return False


def has_constant(piece: str, item: Any) -> bool:
    """Whether an array item holds NaN or Infinity (only looked for when its text could)."""
    if "NaN" not in piece and "Infinity" not in piece:
        return False
    try:
        json.loads(piece, parse_constant=refuse_constant)
    except ValueError:
        return True
    return False
