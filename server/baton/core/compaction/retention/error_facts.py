"""The errors a conversation's tool results show: the facts its summary must keep."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from baton.core.compaction.retention.facts import normalize, result_text
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock

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

# Build and test tools' lines that name the failure, strongest first. A build log says
# "error" in many lines that are no failure ("-- Doxygen not found", "Could NOT find
# Python3" for an optional package); these say what broke.
# 1. A compiler's or a type checker's error: gcc/clang "a.c:3:5: error: ...", rustc
#    "error[E0308]: ...", tsc "a.ts(3,5): error TS2322: ..." or "a.ts:3:5 - error TS2322",
#    a linker's "undefined reference", a CMake error, a linter's "a.py:1:1: E902 ..."
#    (ruff, flake8: their closing "Found 1 error." says less).
_COMPILER = re.compile(
    r"(?:^|[\s:])(?:fatal )?error(?:\[E\d+\])?:\s|\berror TS\d+:|undefined reference to"
    r"|^CMake Error\b|^ERROR in |^\S+:\d+:\d+: [A-Z]{1,4}\d{2,4}\b"
)
# 2. A failing test: pytest's "E" lines (the assertion; tested apart), its "FAILED test -
#    reason" summary, a Rust test's panic, go's "--- FAIL", jest's "● suite › test".
_TEST_FAILURE = re.compile(r"^FAILED \S|^thread '[^']*' panicked at|^--- FAIL: |^● \S")
# Lines that say where, and leave what to the next line.
_CONTINUED = re.compile(r"^thread '[^']*' panicked at .*:$|^CMake Error\b.*:$")
# 3. The tool's closing line with its exit status: make's "*** [target] Error 2" (any of its
#    "***" lines), cargo's
#    "could not compile", npm's exit status, tsc's "Found N errors", CMake's "errors
#    occurred". Tier 1 must not take these (cargo's closing lines start "error:").
_CLOSING = re.compile(
    r"^g?make(?:\[\d+\])?: \*\*\* "
    r"|^error: (?:could not compile|test failed|\d+ targets? failed|aborting due to)"
    r"|^npm (?:ERR!|error) (?:.*\bExit status \d+|Failed at |Lifecycle script )"
    r"|^Found \d+ errors?\b|Configuring incomplete, errors occurred|^ninja: build stopped"
    r"|returned non-zero exit status \d+|exited with (?:exit )?code \d+",
)
# The commands of tools that name no shell command (a text editor's) are no command.
_EDITOR_COMMANDS = frozenset({"view", "create", "str_replace", "insert", "undo_edit"})
COMMAND_CHARS = 80


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


def _joined(lines: list[str]) -> list[str]:
    """The lines, each that ends with a colon (a Rust panic's "panicked at src/a.rs:4:9:",
    "CMake Error at CMakeLists.txt:5 (find_package):") joined with the next one, which
    says what the failure was."""
    out: list[str] = []
    for index, line in enumerate(lines):
        if index + 1 < len(lines) and _CONTINUED.match(line):
            line = f"{line} {lines[index + 1]}"
        out.append(line[:ERROR_LINE_CHARS])
    return out


def _failure_line(said: list[str]) -> str | None:
    """The line that names the failure of a build or a test run (tiers 1-3 above)."""
    compiler: list[str] = []
    assertion: list[str] = []
    test: list[str] = []
    closing: list[str] = []
    for line in said:
        if _CLOSING.search(line):
            closing.append(line)
        elif _COMPILER.search(line):
            compiler.append(line)
        elif _PYTEST_E.match(line):
            assertion.append(_PYTEST_E.sub("", line) or line)
        elif _TEST_FAILURE.search(line):
            test.append(line)
    return next((tier[0] for tier in (compiler, assertion, test, closing) if tier), None)


def error_line(text: str) -> str | None:
    """The line of a failed result's output that best says what went wrong: the one that
    names a build's or a test run's failure (a compiler's error, a failing test's
    assertion, the tool's closing line with its exit status), else the first one that
    names an error, else pytest's failing line, else the first line that is not a banner,
    a header or progress, else the client's "Exit code N" wrapper; None if blank."""
    lines = [line for line in (_clip_line(raw) for raw in text.splitlines()) if line]
    useful = [line for line in lines if not _is_noise(line)]
    said = [line for line in useful if not _WRAPPER.match(line)]
    failure = _failure_line(_joined(said))
    if failure is not None:
        return failure
    for tier in (
        [line for line in said if _SAYS_ERROR.search(line)],
        [line for line in said if _FAILING_LINE.match(line)],
        said,
        useful,
    ):
        if tier:
            return _PYTEST_E.sub("", tier[0]) or tier[0]
    return None


def tool_command(use: ToolUseBlock) -> str | None:
    """The shell command a tool call ran (its input's `command`), on one line and clipped;
    None for a call that runs none (a text editor's `view` is no command)."""
    command = use.input.get("command") if isinstance(use.input, dict) else None
    if not isinstance(command, str) or command.strip() in _EDITOR_COMMANDS:
        return None
    line = normalize(command)
    if len(line) > COMMAND_CHARS:
        line = line[: COMMAND_CHARS - 3].rstrip() + "..."
    return line or None


def error_facts(messages: Iterable[Message]) -> list[ErrorFact]:
    """Errors seen in tool results: each traceback's exception line and innermost location,
    and the telling line of every `is_error` result without one; duplicates dropped, order
    kept."""
    found: dict[str, ErrorFact] = {}
    commands: dict[str, str] = {}
    for message in messages:
        for block in message.content:
            if type(block) is ToolUseBlock:
                note_command(commands, block)
            elif type(block) is ToolResultBlock:
                for fact in result_errors(block, commands.get(block.tool_use_id)):
                    found.setdefault(fact.line, fact)
    return list(found.values())


def note_command(commands: dict[str, str], use: ToolUseBlock) -> None:
    """Remember the shell command a call ran, for the error line of its result."""
    command = tool_command(use)
    if command is not None:
        commands[use.id] = command


def result_errors(block: ToolResultBlock, command: str | None = None) -> list[ErrorFact]:
    """The errors one tool result shows: its tracebacks, else (when it failed) its telling
    line; a bare "Exit code N" names `command`, the one its call ran, when it is known."""
    text = result_text(block)
    facts = _traceback_facts(text)
    if not facts and block.is_error:
        line = error_line(text)
        if line and command and _WRAPPER.match(line):
            line = f"{line} from `{command}`"
        facts = [ErrorFact(line)] if line else []
    return facts
