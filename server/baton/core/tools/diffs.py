"""Edits in words: a unified diff of a file's change and its +added -removed line counts."""

from __future__ import annotations

import difflib


def unified(shown: str, before: str, after: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
        n=context,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def counts(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def edit_title(shown: str, diff: str, created: bool = False) -> str:
    added, removed = counts(diff)
    verb = "Create" if created else "Edit"
    return f"{verb} {shown} (+{added} -{removed})"
