"""How an edit changes a file's text: the text to replace found once (its line breaks
matching any line end), lines inserted, a whole text put in, the file's line ends and byte
order mark kept."""

from __future__ import annotations

import re

from baton.core.tools.file_reads import FileText
from baton.core.tools.workspace import ToolError, split_lines

_BREAK = re.compile(r"\r\n|\r|\n")
BOM = "\ufeff"  # UTF-8's byte order mark, as a file's text read from the disk starts


def line_end(text: str) -> str | None:
    """The line end `text` uses (its first: `\r\n`, `\r` or `\n`), None without one."""
    found = _BREAK.search(text)
    return found.group() if found is not None else None


def _with_end(text: str, end: str | None) -> str:
    return text if end is None else _BREAK.sub(end, text)


MAX_COUNTED = 1000  # matches of the text to replace counted, at most


def _quoted(old: str) -> re.Pattern[str]:
    """What `old` matches: itself, its line breaks (\\n, as read_file shows them, when it
    holds no \\r) any of \\r\\n, \\r and \\n: a file's lines may end in each (mixed)."""
    if "\n" not in old or "\r" in old:
        return re.compile(re.escape(old))
    # a break is a whole \r\n, never its \r or \n alone (`\ny` once in `x\r\ny`)
    breaks = r"(?:\r\n|\r(?!\n)|(?<!\r)\n)"
    return re.compile(breaks.join(re.escape(line) for line in old.split("\n")))


def occurrences(text: str, old: str | re.Pattern[str]) -> int:
    """The places `old` matches in `text` (at most MAX_COUNTED), overlapping ones too:
    `str.count` counts '}\\n}\\n' once in three closing braces, and an edit meant for the
    last two went to the first two."""
    pattern = re.compile(re.escape(old)) if isinstance(old, str) else old
    found, match = 0, pattern.search(text)
    while match is not None and found < MAX_COUNTED:
        found, match = found + 1, pattern.search(text, match.start() + 1)
    return found


def replaced(shown: str, before: str, old: str, new: str) -> tuple[str, int]:
    """`before` with `old` (once) replaced by `new`, whose lines end as the replaced text's
    do (else as the file's), and the line `old` started at (the result says it: a view's
    diff of the call shows it)."""
    if not old:
        raise ToolError("the text to replace must not be empty")
    pattern = _quoted(old)
    found = occurrences(before, pattern)
    if found == 0:
        raise ToolError(f"no match in {shown} for the text to replace (it must match exactly)")
    if found > 1:
        times = f"{found:,} times" if found < MAX_COUNTED else f"{MAX_COUNTED:,} times or more"
        raise ToolError(
            f"the text to replace occurs {times} in {shown}; include more lines so it matches once"
        )
    match = pattern.search(before)
    assert match is not None  # found once
    line = len(_BREAK.findall(before[: match.start()])) + 1
    end = line_end(match.group()) or line_end(before)
    return before[: match.start()] + _with_end(new, end) + before[match.end() :], line


def whole(before: FileText | None, text: str) -> str:
    """`text` in place of the whole file, with the file's line ends (those of its first
    line, for a text written with \\n only) and its UTF-8 byte order mark kept, as an editor
    keeps its document's when it applies the edit."""
    if before is None:
        return text
    end = line_end(before.text)
    if end not in (None, "\n") and "\r" not in text:
        text = _with_end(text, end)
    if before.text.startswith(BOM) and not text.startswith(BOM):
        return BOM + text
    return text


def inserted(shown: str, before: str, line: object, new: str) -> str:
    bom = BOM if before.startswith(BOM) else ""  # the encoding's: it stays first
    lines = split_lines(before, keepends=True)  # the mark left out
    if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line <= len(lines):
        raise ToolError(f"insert_line must be between 0 and {len(lines)} for {shown}")
    end = line_end(before) or "\n"  # the file's own line ends
    if lines and line == len(lines) and not lines[-1].endswith(("\r", "\n")):
        lines[-1] += end
    piece = _with_end(new, end)
    if not piece.endswith(end):
        piece += end
    return bom + "".join(lines[:line]) + piece + "".join(lines[line:])
