"""What a model's search pattern costs before it is used: the size a regular expression's
counted repeats expand to when compiled (`regex` copies `(x){1000}` a thousand times, so
`((a{1000}){1000}){1000}`, 23 characters, asks for about 10^9 nodes and gigabytes)."""

from __future__ import annotations

import re

# Items a compiled pattern may hold: 50,000 compile in about 50 ms and 20 MB
# (`(a{1000}){1000}` is a million: 0.9 s and 260 MB).
MAX_REGEX_ITEMS = 50_000

_COUNT = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
# what follows `(?` to say a group's kind (`(?:`, `(?P<name>`, `(?<=`, `(?i:`): no item
_GROUP_KIND = re.compile(r"\(\?(?:P?<(?![=!])[^>]*>|'[^']*'|<[=!]|[:=!>|]|[a-zA-Z-]*:?)")
# \p{L}, \N{name}, \x{41}, \g<name>: braces that are no count
_BRACED_ESCAPES = frozenset("pPNxuUgk")


def _escape_end(pattern: str, i: int) -> int:
    """The index after the escape starting at pattern[i] (a backslash)."""
    j = i + 2
    if pattern[i + 1 : i + 2] in _BRACED_ESCAPES and pattern[j : j + 1] in ("{", "<"):
        close = pattern.find("}" if pattern[j] == "{" else ">", j)
        return len(pattern) if close < 0 else close + 1
    return j


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class starting at pattern[i] (`[`)."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1  # a `]` first is a member
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def regex_items(pattern: str) -> int:
    """About how many items `pattern` compiles to: each atom (a character, a class, an
    escape) counts 1, a group the sum of what it holds, a count `{m}` multiplies what it
    repeats by m and a range `{m,n}` / `{m,}` by m + 1 (the copies `regex` makes); `*`,
    `+` and `?` at most by 2. Never less than the truth for the patterns `regex` accepts;
    an invalid pattern gets some figure (its compilation says what is wrong)."""
    frames: list[list[int]] = [[0, 0]]  # per open group: [total, size of its last item]
    i, n = 0, len(pattern)

    def item(size: int) -> None:
        frames[-1][0] += size
        frames[-1][1] = size

    def repeat(factor: int) -> None:
        total, last = frames[-1]
        frames[-1] = [total + last * (factor - 1), last * factor]

    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _escape_end(pattern, i)
            item(1)
            continue
        if c == "[":
            i = _class_end(pattern, i)
            item(1)
            continue
        if c == "(":
            if pattern.startswith("(?#", i):  # a comment
                close = pattern.find(")", i)
                i = n if close < 0 else close + 1
                continue
            frames.append([0, 0])
            kind = _GROUP_KIND.match(pattern, i)
            i = i + 1 if kind is None else kind.end()
            continue
        if c == ")" and len(frames) > 1:
            size = max(frames.pop()[0], 1)
            item(size)
            i += 1
            continue
        if c == "|":
            frames[-1][1] = 0
            i += 1
            continue
        counted = _COUNT.match(pattern, i) if c == "{" else None
        if c in "*+?" or (counted is not None and (counted[1] or counted[3])):
            if counted is not None:
                low = int(counted[1] or 0)
                fixed = counted[2] is None
                repeat(low if fixed else low + 1)
                i = counted.end()
            else:
                repeat(2 if c == "+" else 1)
                i += 1
            if pattern[i : i + 1] in ("?", "+"):  # lazy, possessive: no further repeat
                i += 1
            continue
        item(1)
        i += 1
    return sum(frame[0] for frame in frames)
