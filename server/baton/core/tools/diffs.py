"""Edits in words: a unified diff of a file's change and its +added -removed line counts.

Lines are the editor's (`split_lines`: broken at \\n, \\r\\n and \\r only): `str.splitlines`
also breaks at a form feed, a vertical tab or U+2028, so a file holding one got hunks
numbered past the editor's lines and a changed line shown cut in two."""

from __future__ import annotations

import difflib
import re

from baton.core.tools.workspace import split_lines

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$", re.MULTILINE)


def unified(shown: str, before: str, after: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        split_lines(before, keepends=True),
        split_lines(after, keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
        n=context,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def at_line(diff: str, line: int | None) -> str:
    """A diff of a piece of a file (the texts of a stored replace) with its hunks numbered
    from `line`, the file's line the piece starts at (its line 1); when that is not known,
    its hunks labelled `@@ @@`: numbered from 1 they named lines the change was not at."""

    def numbered(found: re.Match[str]) -> str:
        if line is None:
            return "@@ @@"
        old, old_count, new, new_count = found.groups()
        shift = line - 1
        return f"@@ -{int(old) + shift}{old_count or ''} +{int(new) + shift}{new_count or ''} @@"

    return _HUNK.sub(numbered, diff)


def counts(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in split_lines(diff):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def edit_title(shown: str, diff: str, created: bool = False) -> str:
    added, removed = counts(diff)
    verb = "Create" if created else "Edit"
    return f"{verb} {shown} (+{added} -{removed})"
