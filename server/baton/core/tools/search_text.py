"""search_text: a regular expression over the workspace's text files (`.gitignore`
honoured, binary and credential files skipped; a file the editor has open searched as the
editor has it, as read_file reads it), hits as `path:line: text`, bounded.

Matched with the `regex` module (Python's syntax; tiktoken's own dependency), which can
stop a match: a pattern that backtracks without end (`(a|aa)+$`) is stopped after
MATCH_SECONDS on a line, and lets go of the GIL meanwhile, so the server answers on."""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import regex

from baton.core.compaction.working_set.credentials import credential_in
from baton.core.compaction.working_set.visible import resolve_path
from baton.core.tools.file_reads import read_disk
from baton.core.tools.find_files import glob_matcher, workspace_glob
from baton.core.tools.host import MAX_FILE_BYTES
from baton.core.tools.patterns import MAX_REGEX_ITEMS, regex_items
from baton.core.tools.registry import Tool, ToolContext, ToolResult, counted
from baton.core.tools.walk import (
    WALK_SECONDS,
    Walk,
    Walked,
    files,
    off_loop,
    walked,
    walked_file,
)
from baton.core.tools.workspace import (
    Located,
    ToolError,
    Unreadable,
    Workspace,
    glob_hint,
    split_lines,
)

MAX_HITS = 200
MAX_HIT_CHARS = 300
MAX_PATTERN = 1000
MATCH_SECONDS = 2.0  # one line's match, at most
SEARCH_SECONDS = WALK_SECONDS  # the whole search, at most

DEFINITION: dict[str, Any] = {
    "name": "search_text",
    "description": (
        "Search the workspace's text files with a regular expression (Python syntax); "
        "hits come as `path:line: text`. `path` limits the search to a folder or file, "
        "`glob` to file names or paths (`*.py`). Files .gitignore ignores are skipped."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string"},
            "glob": {"type": "string"},
        },
        "required": ["pattern"],
    },
}


def title(input: dict[str, Any]) -> str:
    return f"Search `{input.get('pattern') or '?'}`"


def _search(
    workspace: Workspace,
    start: Located | None,
    pattern: regex.Pattern[str],
    glob: str | None,
    live: dict[Path, str],
    walk: Walk,
) -> tuple[list[str], int, int]:
    deadline = walk.deadline or time.monotonic() + SEARCH_SECONDS
    matcher = glob_matcher(glob) if glob is not None else None
    hits: list[str] = []
    total = files_hit = 0
    entries: Iterable[Walked]
    if start is not None and (start.real in live or start.real.is_file()):
        entries = [walked_file(workspace, start)]
    else:
        entries = files(workspace, start, walk)
    for entry in entries:
        walk.check()
        real, shown = entry.real, entry.shown
        if matcher is not None and not entry.matches(matcher):
            continue
        if workspace.shown(real) is None:
            continue  # a credential file (restore.exclude): never searched
        text = live.get(real)
        try:
            if (real.stat().st_size if text is None else len(text)) > MAX_FILE_BYTES:
                continue
            if text is None:
                text = read_disk(Located(real, real, shown, real.parent))
        except FileNotFoundError:
            continue  # gone since the walk found it
        except Unreadable as exc:
            walk.unread_file(exc.why)  # said in the result: its text may hold hits
            continue
        except OSError as exc:
            walk.unread_file(exc.strerror or type(exc).__name__)
            continue
        except ToolError:
            continue  # binary, not UTF-8: not text to search
        if "\x00" in text or credential_in(text) is not None:
            continue
        hit_here = False
        for number, line in enumerate(split_lines(text), 1):
            found = _search_line(pattern, line, deadline, f"{shown}:{number}")
            if found is None:
                continue
            total += 1
            hit_here = True
            if len(hits) < MAX_HITS:
                hits.append(f"{shown}:{number}: {_around(line, found.start())}")
        files_hit += hit_here
    return hits, total, files_hit


def _around(line: str, at: int) -> str:
    """The hit's line, a long one cut to MAX_HIT_CHARS around where the match starts (`at`):
    its first characters may hold nothing of it (a minified file's match at column 5,000)."""
    if len(line) <= MAX_HIT_CHARS:
        return line.strip()
    start = max(0, min(at - MAX_HIT_CHARS // 4, len(line) - MAX_HIT_CHARS))
    end = start + MAX_HIT_CHARS
    head = "[cut] " if start else ""
    tail = " [cut]" if end < len(line) else ""
    return f"{head}{line[start:end].strip()}{tail}"


def _by_real_path(editor: dict[Path, str]) -> dict[Path, str]:
    """The editor's texts by the file they are (the editor may name one through a link)."""
    live: dict[Path, str] = {}
    for path, text in editor.items():
        real = resolve_path(path)
        if real is not None:
            live[real] = text
    return live


async def _editor_texts(ctx: ToolContext) -> dict[Path, str]:
    open_texts = getattr(ctx.host, "open_texts", None)
    return await open_texts() if open_texts is not None else {}


def _search_line(
    pattern: regex.Pattern[str], line: str, deadline: float, where: str
) -> regex.Match[str] | None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise ToolError(f"the search took over {SEARCH_SECONDS:.0f} s; narrow it (path, glob)")
    try:
        return pattern.search(line, timeout=min(MATCH_SECONDS, left), concurrent=True)
    except TimeoutError:
        raise ToolError(
            f"the pattern takes too long to match at {where}: a repetition inside a "
            "repetition (`(a|aa)+`) backtracks without end; simplify it"
        ) from None


def _compiled(pattern: str) -> regex.Pattern[str]:
    items = regex_items(pattern)
    if items > MAX_REGEX_ITEMS:
        # refused before compiling: `regex` copies each counted repeat, nested ones multiply
        shown = f"{items:,}" if items < 10**15 else "more than 10^15"
        raise ToolError(
            f"pattern is too large to compile: its counted repeats (`{{n}}`) come to {shown} "
            f"items, over {MAX_REGEX_ITEMS:,}; use `+`, `*` or a range `{{m,n}}` with a small m"
        )
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        why = str(exc) if isinstance(exc, regex.error) else "it nests or repeats too deeply"
        raise ToolError(f"pattern is not a valid regular expression: {why}") from None


async def run(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = input.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ToolError("pattern must be a non-empty regular expression")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"pattern is longer than {MAX_PATTERN} characters")
    compiled = await off_loop(partial(_compiled, pattern))  # a large one takes a while
    # a line holds no line break ("No hits" would mislead), unless (?x) makes it a space
    if ("\n" in pattern or "\r" in pattern) and not compiled.flags & regex.VERBOSE:
        raise ToolError(
            "search_text matches one line at a time: a pattern holding a line break never "
            "matches; search for one of its lines"
        )
    raw_path, glob = input.get("path"), input.get("glob")
    if glob is not None and (not isinstance(glob, str) or not glob.strip()):
        raise ToolError("glob must be a non-empty string")
    start = None
    if isinstance(raw_path, str) and raw_path.strip() not in ("", "."):
        start = ctx.workspace.locate(raw_path, must_exist=False)  # the editor's too
    elif raw_path is not None and not isinstance(raw_path, str):
        raise ToolError("path must be a string")
    live = _by_real_path(await _editor_texts(ctx))  # the editor's texts, by the file they are
    if start is not None and not start.real.exists() and start.real not in live:
        named = str(raw_path).strip()
        hint = " (path names a file or folder: give a glob as glob)" if glob_hint(named) else ""
        raise ToolError(f"{named!r} does not exist{hint}")
    walk = Walk(deadline=time.monotonic() + SEARCH_SECONDS)  # a slow glob or walk stops there too
    shape = workspace_glob(ctx.workspace, glob) if glob else None
    hits, total, files_hit = await walked(
        walk, lambda: _search(ctx.workspace, start, compiled, shape, live, walk)
    )
    text = "\n".join(hits) if hits else f"No hits for {pattern!r}."
    if total > MAX_HITS:
        text += f"\n[cut: {MAX_HITS} of {total} hits shown (in {files_hit} files); narrow it]"
    text += walk.notes()
    return ToolResult(text, summary=counted(total, "hit"))


TOOL = Tool(DEFINITION, "auto", "search", run, title=title)
