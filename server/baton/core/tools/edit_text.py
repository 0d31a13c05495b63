"""How an edit changes a file's text: the text to replace found once (its line breaks
matching any line end), lines inserted, a whole text put in, the file's line ends and byte
order mark kept."""

from __future__ import annotations

import re
from bisect import bisect_left

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


def occurrences(text: str, old: str) -> int:
    """The places `old` matches in `text` (at most MAX_COUNTED), overlapping ones too:
    `str.count` counts '}\\n}\\n' once in three closing braces, and an edit meant for the
    last two went to the first two."""
    found, at = 0, text.find(old)
    while at != -1 and found < MAX_COUNTED:
        found, at = found + 1, text.find(old, at + 1)
    return found


def _crlf_at(text: str) -> list[int]:
    """Where each \\r\\n of `text` stands once every line end is made \\n (in order)."""
    return [m.start() - n for n, m in enumerate(re.finditer("\r\n", text))]


def replaced(shown: str, before: str, old: str, new: str) -> tuple[str, int]:
    """`before` with `old` (once) replaced by `new`, whose lines end as the replaced text's
    do (else as the file's), and the line `old` started at (the result says it: a view's
    diff of the call shows it). A \\n of an `old` holding no \\r (as read_file shows lines)
    matches any whole line end: a file's lines may end in \\r\\n, \\r and \\n (mixed)."""
    if not old:
        raise ToolError("the text to replace must not be empty")
    loose = "\n" in old and "\r" not in old and "\r" in before
    text = _BREAK.sub("\n", before) if loose else before  # looked for with \n line ends
    found = occurrences(text, old)
    if found == 0:
        raise ToolError(f"no match in {shown} for the text to replace (it must match exactly)")
    if found > 1:
        times = f"{found:,} times" if found < MAX_COUNTED else f"{MAX_COUNTED:,} times or more"
        raise ToolError(
            f"the text to replace occurs {times} in {shown}; include more lines so it matches once"
        )
    start = text.find(old)
    stop = start + len(old)
    if loose:  # back to `before`: each \r\n before a place is one character more
        crlf = _crlf_at(before)
        start, stop = start + bisect_left(crlf, start), stop + bisect_left(crlf, stop)
    line = len(_BREAK.findall(before[:start])) + 1
    end = line_end(before[start:stop]) or line_end(before)
    return before[:start] + _with_end(new, end) + before[stop:], line


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
