"""The errors a conversation's tool results show: the facts its summary must keep."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from baton.core.compaction.retention.facts import normalize, result_text
from baton.core.conversation.messages import Message, ToolResultBlock

ERROR_LINE_CHARS = 200

_TRACEBACK = "Traceback (most recent call last):"
_LOCATION = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b.*")
_TAG = re.compile(r"</?[A-Za-z_][\w-]*>")

# Lines of a failed command's output that say nothing about what went wrong: banners
# ("===== test session starts =====", "_ _ _ _"), test runners' headers and progress
# ("platform linux -- Python ...", "tests/test_a.py ..F.  [ 50%]").
_BANNER = re.compile(r"^[=_\-*#~+](?:\s?[=_\-*#~+]){2,}")
_PROGRESS = re.compile(r"\[\s*\d{1,3}%\]$")
_HEADER = re.compile(
    r"^(platform \w+ -- |rootdir: |cachedir: |configfile: |plugins: |collected \d|collecting )"
)
# The wrapper a client puts around a failed command ("Error: Exit code 1"): an error,
# but only the last resort when the output has a line that says more.
_WRAPPER = re.compile(
    r"^(Error: )?(Exit code|exit status|Command failed with exit code) \d+$", re.I
)
_SAYS_ERROR = re.compile(
    r"error|exception|fail|fatal|denied|not found|no such|cannot|could not|can't|unable|"
    r"refused|timed out|invalid|^E\s",
    re.IGNORECASE,
)
_FAILING_LINE = re.compile(r"^>\s+\S")  # pytest marks the failing source line with ">"
_PYTEST_E = re.compile(r"^E\s+")


@dataclass(frozen=True)
class ErrorFact:
    line: str
    location: str | None = None


def _clip_line(text: str) -> str:
    line = normalize(_TAG.sub(" ", text))
    return line[:ERROR_LINE_CHARS]


def _traceback_facts(text: str) -> list[ErrorFact]:
    if _TRACEBACK not in text:  # most results: skip the line-by-line scan
        return []
    facts: list[ErrorFact] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if _TRACEBACK not in lines[index]:
            index += 1
            continue
        location: str | None = None
        index += 1
        while index < len(lines):
            match = _LOCATION.match(lines[index])
            if match:
                location = f"{match.group(1)}, line {match.group(2)}"
            elif _EXCEPTION_LINE.match(lines[index].strip()):
                facts.append(ErrorFact(_clip_line(lines[index]), location))
                break
            index += 1
        index += 1
    return facts


def _is_noise(line: str) -> bool:
    return bool(_BANNER.match(line) or _PROGRESS.search(line) or _HEADER.match(line))


def error_line(text: str) -> str | None:
    """The line of a failed result's output that best says what went wrong: the first one
    that names an error, else pytest's failing line, else the first line that is not a
    banner, a header or progress, else the client's "Exit code N" wrapper; None if blank."""
    lines = [line for line in (_clip_line(raw) for raw in text.splitlines()) if line]
    useful = [line for line in lines if not _is_noise(line)]
    said = [line for line in useful if not _WRAPPER.match(line)]
    for tier in (
        [line for line in said if _SAYS_ERROR.search(line)],
        [line for line in said if _FAILING_LINE.match(line)],
        said,
        useful,
    ):
        if tier:
            return _PYTEST_E.sub("", tier[0]) or tier[0]
    return None


def error_facts(messages: Iterable[Message]) -> list[ErrorFact]:
    """Errors seen in tool results: each traceback's exception line and innermost location,
    and the telling line of every `is_error` result without one; duplicates dropped, order
    kept."""
    found: dict[str, ErrorFact] = {}
    for message in messages:
        for block in message.tool_results():
            for fact in result_errors(block):
                found.setdefault(fact.line, fact)
    return list(found.values())


def result_errors(block: ToolResultBlock) -> list[ErrorFact]:
    """The errors one tool result shows: its tracebacks, else (when it failed) its telling line."""
    text = result_text(block)
    facts = _traceback_facts(text)
    if not facts and block.is_error:
        line = error_line(text)
        facts = [ErrorFact(line)] if line else []
    return facts
