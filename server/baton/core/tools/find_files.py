"""find_files: files of the workspace whose path matches a glob, `.gitignore` honoured."""

from __future__ import annotations

import fnmatch
import itertools
import re
import time
from collections.abc import Callable
from typing import Any

from baton.core.tools.registry import Tool, ToolContext, ToolResult, counted
from baton.core.tools.walk import WALK_SECONDS, Walk, files, walked
from baton.core.tools.workspace import ToolError, Workspace
from baton.core.workspace.editor_files import is_file_uri, uri_to_path

MAX_RESULTS = 500
MAX_PATTERN = 1000
MAX_ALTERNATIVES = 100  # globs a pattern's braces expand to, at most
MAX_GLOBSTARS = 6  # `**/` in a glob, at most (after a run of them is made one)
_GLOBSTARS = re.compile(r"(?:\*\*/)+")

DEFINITION: dict[str, Any] = {
    "name": "find_files",
    "description": (
        "Find files in the workspace folders by glob (`**/*.py`, `src/**/test_*.ts`, "
        "`*.md`); files .gitignore ignores are left out."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
    },
}


def title(input: dict[str, Any]) -> str:
    return f"Find {input.get('pattern') or '?'}"


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A glob against a relative path: any of the globs its braces expand to
    (`*.{ts,tsx}`: `*.ts` or `*.tsx`), at most MAX_ALTERNATIVES."""
    matchers = [_matcher(glob) for glob in _expanded(pattern)]
    if len(matchers) == 1:
        return matchers[0]
    return lambda shown: any(matches(shown) for matches in matchers)


def _expanded(pattern: str) -> list[str]:
    """The globs `pattern`'s braces stand for, as a shell expands them: `{a,b}` is a or b,
    nested ones too; braces without a comma in them, or not closed, are characters."""
    for start, char in enumerate(pattern):
        if char != "{":
            continue
        depth, commas = 0, []
        for i in range(start, len(pattern)):
            if pattern[i] == "{":
                depth += 1
            elif pattern[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif pattern[i] == "," and depth == 1:
                commas.append(i)
        else:
            continue  # not closed: a character (`{y{a,b}` is `{ya` or `{yb`)
        if not commas:
            continue
        head, tail = pattern[:start], pattern[i + 1 :]
        cuts = [start, *commas, i]
        globs: list[str] = []
        for left, right in itertools.pairwise(cuts):
            globs += _expanded(head + pattern[left + 1 : right] + tail)
            if len(globs) > MAX_ALTERNATIVES:
                raise ToolError(
                    f"a glob's braces may expand to at most {MAX_ALTERNATIVES} alternatives"
                )
        return globs
    return [pattern]


def _matcher(pattern: str) -> Callable[[str], bool]:
    """A glob without braces against a relative path, a folder at a time: `*`, `?` and
    `[...]` stay inside one name (`src/*.py` is no match for src/a/b.py, as in git or a
    shell), `**` as a whole name matches any folders (none too); a pattern without a /
    matches the file's name anywhere. Matched by positions (pattern part, path part), each
    tried once, so `**` repeated costs no more than once; at most MAX_GLOBSTARS separate
    ones."""
    if "/" not in pattern:
        return lambda shown: fnmatch.fnmatchcase(shown.rsplit("/", 1)[-1], pattern)
    pattern = _GLOBSTARS.sub("**/", pattern.removeprefix("/"))  # `/x`: x at the top
    if pattern.endswith("/"):
        pattern += "**"  # `src/`: the folder, what it holds (as in .gitignore)
    if pattern.count("**/") > MAX_GLOBSTARS:
        raise ToolError(f"a glob may hold `**/` at most {MAX_GLOBSTARS} times")
    parts: list[str] = []
    for part in pattern.split("/"):
        if part != "**" or parts[-1:] != ["**"]:  # `**/**` is one
            parts.append(part)
    if parts[-1] == "**":
        parts.append("*")  # `src/**`: what is inside src, a name at least
    names = [None if p == "**" else re.compile(fnmatch.translate(p)) for p in parts]

    def matches(shown: str) -> bool:
        path = shown.split("/")
        # reach[j]: the path's first j names matched by the pattern's parts so far
        reach = [True] + [False] * len(path)
        for name in names:
            if name is None:  # any folders, none too
                for j in range(1, len(path) + 1):
                    reach[j] = reach[j] or reach[j - 1]
                continue
            reach = [False] + [
                reach[j] and name.match(path[j]) is not None for j in range(len(path))
            ]
        return reach[-1]

    return matches


def workspace_glob(workspace: Workspace, glob: str) -> str:
    """`glob` as the walk's paths are matched: spaces around it and a leading `./` dropped,
    an absolute one made relative to the folder it starts with (`/w/src/*.py`: `src/*.py`,
    `/w/*.py`: `/*.py`, the top's files only), a `file:` URI as its path; ToolError when
    it starts with none."""
    glob = glob.strip().removeprefix("./")
    if is_file_uri(glob):
        path = uri_to_path(glob)
        glob = path.as_posix() if path is not None else glob
    if not glob.startswith("/"):
        return glob
    bases = [
        (base.as_posix().rstrip("/"), root)
        for root in workspace.roots
        for base in (root.path, root.real)
    ]
    for base, root in sorted(bases, key=lambda found: -len(found[0])):  # the deepest first
        if glob.startswith(base + "/"):
            rest = glob[len(base) + 1 :]
            return f"/{rest}" if root.shown == "." else f"{root.shown}/{rest}"
    raise ToolError(f"{glob!r} is outside the workspace folders")


def _find(workspace: Workspace, pattern: str, walk: Walk) -> tuple[list[str], int]:
    matcher = glob_matcher(pattern)
    found: list[str] = []
    total = 0
    for entry in files(workspace, None, walk):
        if entry.matches(matcher) and workspace.shown(entry.real) is not None:
            total += 1  # (a credential file, restore.exclude, is never listed)
            if len(found) < MAX_RESULTS:
                found.append(entry.shown)
    return found, total


async def run(input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = input.get("pattern")
    if not isinstance(pattern, str) or not pattern.strip():
        raise ToolError("pattern must be a non-empty glob")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"pattern is longer than {MAX_PATTERN} characters")
    pattern = workspace_glob(ctx.workspace, pattern)
    # a walk of a large workspace takes a while: off the event loop
    walk = Walk(deadline=time.monotonic() + WALK_SECONDS)
    found, total = await walked(walk, lambda: _find(ctx.workspace, pattern, walk))
    text = "\n".join(found) if found else f"No files match {pattern}."
    if total > MAX_RESULTS:
        text += f"\n[cut: {MAX_RESULTS} of {total} files shown; narrow the pattern]"
    text += walk.notes()
    return ToolResult(text, summary=counted(total, "file"))


TOOL = Tool(DEFINITION, "auto", "search", run, title=title)
