"""The facts an earlier summary carries (the prompts, paths and errors it quoted), read back
from its text: Baton's sections and ledger, Claude Code's numbered sections, the API's block.

A span that holds an earlier summary must carry these on, as it carries the facts of its
own messages: the summary is all the model could still see of what it stands for.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from baton.core.compaction.prompts import extract_summary
from baton.core.compaction.retention.error_facts import ERROR_LINE_CHARS, ErrorFact
from baton.core.compaction.retention.facts import (
    PathTouch,
    bullet_items,
    normalize,
    split_summary_prompts,
)
from baton.core.conversation.messages import CompactionBlock, Message, TextBlock

# The operation a path named only by an earlier summary is listed with.
CARRIED = "named in an earlier summary"
_PLAIN_SUMMARY = re.compile(r"^Summary:[ \t]*$", re.MULTILINE)
_HEADING = re.compile(r"^(?:#{1,6}\s+|\*{0,2}\d{1,2}\.\s+)(.*)$")
_OPERATIONS = frozenset(
    {"read", "written", "edited", "searched", "listed", "used", "restored", CARRIED}
)
_WITH_OPS = re.compile(r"^(.+?) \(([^()]+)\)$")
_WITH_LOCATION = re.compile(r"^(.+?) \(at ([^()]+)\)$")
_CUT_MARK = re.compile(r"\s*\[\.\.\. [\d,]+ characters cut \.\.\.\]$")
_UNDER = re.compile(r"\(under (.+)\)\s*$")
# Lines Baton writes in these sections that are no fact.
_PLACEHOLDER = re.compile(r"^(?:No (?:files|errors) were|\.\.\. and [\d,]+ more$|None\.?$)")
# A path written in prose: one with a folder and a file name with an extension, or a bare
# file name with a common one. Not part of a URL, a longer path or a word.
_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|rst|toml|yaml|yml|rs|go|c|h|cc|cpp|hpp|"
    "java|kt|rb|php|cs|swift|sh|css|scss|html|txt|cfg|ini|lock|sql|xml|vue|svelte"
)
# An item that names a file without an extension, or a folder: "Makefile", "CHANGELOG",
# ".bashrc", "src/handlers/" (a function's or a concept's name is none).
_BARE_FILE = re.compile(
    r"^(?:[A-Z][A-Z0-9_-]+|(?:Make|Docker|Gem|Rake|Proc|Jenkins|Vagrant|Brew|Pip)file"
    r"|\.[\w.-]+|~?[\w@.+-]*/[\w@.+/*-]*)$"
)
# "Node.js", "Vue.js": names of libraries, not files.
_LIBRARY = re.compile(r"^[A-Z][a-z]+\.js$")
_PROSE_PATH = re.compile(
    r"(?<![\w/.:@~-])((?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+*-]*\.[A-Za-z0-9]{1,8}"
    rf"|[\w-][\w.-]*\.(?:{_EXTENSIONS}))(?![\w/-])"
)


@dataclass
class SummaryFacts:
    """What one earlier summary quoted: its user prompts (in order), the paths it names
    (with the operations Baton's own list gives them), the errors its errors section
    lists, and its text without the user-messages section."""

    prompts: list[str] = field(default_factory=list)
    paths: list[PathTouch] = field(default_factory=list)
    errors: list[ErrorFact] = field(default_factory=list)
    rest: str = ""


def summary_text(message: Message) -> str | None:
    """The text of an earlier summary, or None for a message that is none: Baton's or an
    imported one (`kind == "summary"`), or a message that starts with the API's compaction
    block."""
    content = message.content
    # The API's block comes first in its message: one test a message (this runs for each).
    if message.kind != "summary" and not (content and type(content[0]) is CompactionBlock):
        return None
    parts: list[str] = []
    for block in content:
        if type(block) is CompactionBlock:
            parts.append(block.content or "")
        elif type(block) is TextBlock:
            parts.append(block.text)
    return "\n".join(parts)


def summary_body(text: str) -> str:
    """An earlier summary without its wrapper and analysis draft (tagged, or Claude Code's
    plain "Analysis:" ... "Summary:" layout)."""
    body = extract_summary(text)
    match = _PLAIN_SUMMARY.search(body)
    return body[match.end() :] if match and "Analysis:" in body[: match.start()] else body


def read_summary(text: str) -> SummaryFacts:
    """The facts the summary `text` quotes."""
    body = summary_body(text)
    prompts, rest = split_summary_prompts(body)
    facts = SummaryFacts(prompts=_without_cut_copies([unquoted(p) for p in prompts]), rest=rest)
    listed: dict[str, PathTouch] = {}
    for title, lines in _sections(body):
        lowered = title.lower()
        if "files" in lowered:
            folder = _UNDER.search(title)
            for item in bullet_items(lines):
                touch = _listed_path(item, folder.group(1).strip() if folder else "")
                if touch is not None:
                    _merge(listed, touch)
        elif "error" in lowered:
            facts.errors.extend(_listed_error(item) for item in bullet_items(lines))
    for match in _PROSE_PATH.finditer(body):
        path = match.group(1).rstrip(".")
        if _LIBRARY.match(path):
            continue
        if not any(known == path or known.endswith("/" + path) for known in listed):
            _merge(listed, PathTouch(path, [CARRIED]))
    facts.paths = list(listed.values())
    facts.errors = [e for e in dict.fromkeys(facts.errors) if e.line]
    return facts


def unquoted(prompt: str) -> str:
    """A prompt as quoted ("...") by a summary that wraps each in quotation marks."""
    if len(prompt) > 2 and prompt[0] == prompt[-1] == '"':
        return prompt[1:-1]
    return prompt


def _without_cut_copies(prompts: list[str]) -> list[str]:
    """The prompts without the cut copies of one listed longer elsewhere: a summary's
    user-messages section may cut a prompt that its fact ledger then carries longer."""
    heads = [normalize(_CUT_MARK.sub("", p)) for p in prompts]
    ordered = sorted(heads)  # the texts that start with a head follow it here
    kept: list[str] = []
    for prompt, head in zip(prompts, heads, strict=True):
        if _CUT_MARK.search(prompt):
            after = bisect.bisect_right(ordered, head)
            if after < len(ordered) and ordered[after].startswith(head):
                continue  # a longer copy is listed
        kept.append(prompt)
    return kept


def prose_sections(rest: str) -> list[str]:
    """The parts of an earlier summary's text (without its user messages) that are not
    carried as facts: its lead and each section other than its files and errors lists."""
    parts: list[list[str]] = [[]]
    carried = False
    for line in rest.splitlines():
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).lower()
            carried = "files" in title or "error" in title
            parts.append([])
        if not carried:
            parts[-1].append(line)
    return [text for text in ("\n".join(part).strip() for part in parts) if text]


def _sections(body: str) -> list[tuple[str, list[str]]]:
    """The body's headed sections: each heading's title and the lines up to the next."""
    sections: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            sections.append((heading.group(1), []))
        elif sections:
            sections[-1][1].append(line)
    return sections


def _clean(line: str) -> str:
    return line.strip().strip("*`").rstrip(":").strip().strip("`")


def _listed_path(item: str, folder: str) -> PathTouch | None:
    """The path an item of a files list names: Baton's "path (read, edited)", a ledger's
    path under its folder, or the first line of another summary's item."""
    first = item.split("\n", 1)[0].strip()
    if _PLACEHOLDER.match(first):
        return None
    with_ops = _WITH_OPS.match(first)
    if with_ops:
        ops = [op.strip() for op in with_ops.group(2).split(",")]
        if all(op in _OPERATIONS for op in ops):
            return PathTouch(folder + with_ops.group(1), ops)
    prose = _PROSE_PATH.search(first)
    if prose:
        return PathTouch(folder + prose.group(1).rstrip("."), [CARRIED])
    name = _clean(first)
    if _BARE_FILE.match(name):  # a folder, or a file without an extension: Makefile
        return PathTouch(folder + name, [CARRIED])
    return None


def _listed_error(item: str) -> ErrorFact:
    """An item of an errors list: Baton's "line (at location)", or another summary's item
    on one line (its sub-items joined to it), clipped as error lines are."""
    lines = [line.strip().lstrip("-* ").strip() for line in item.split("\n")]
    if _PLACEHOLDER.match(lines[0]):
        return ErrorFact("")
    located = _WITH_LOCATION.match(lines[0]) if len(lines) == 1 else None
    if located:
        return ErrorFact(located.group(1), located.group(2))
    return ErrorFact(normalize(" ".join(lines))[:ERROR_LINE_CHARS])


def _merge(touches: dict[str, PathTouch], touch: PathTouch) -> None:
    known = touches.setdefault(touch.path, PathTouch(touch.path))
    for op in touch.ops:
        if op not in known.ops:
            known.ops.append(op)


def carried_facts(messages: Sequence[Message]) -> list[SummaryFacts]:
    """The facts of every earlier summary among `messages`, in order."""
    found: list[SummaryFacts] = []
    for message in messages:
        text = summary_text(message)
        if text is not None:
            found.append(read_summary(text))
    return found
