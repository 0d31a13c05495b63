"""Retention of a compaction (prompts, paths, errors that survived) and the fact ledger."""

from __future__ import annotations

from collections.abc import Sequence

from baton.core.boundary import Retention, RetentionFigure
from baton.core.compaction.facts import (
    error_facts,
    message_haystack,
    normalize,
    prompt_texts,
    touched_paths,
)
from baton.core.messages import Message

# A long prompt survives when its head does: summaries may cut the tail with a marker.
PROMPT_PREFIX_CHARS = 200
LEDGER_PROMPT_CHARS = 500
LEDGER_HEADING = (
    "Fact ledger: details of the summarized messages that the summary above does not carry."
)


def _unique(values: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        key = normalize(value)
        if key and key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _found(haystack: str, fact: str, prefix: int | None = None) -> bool:
    """Whether `fact` (or its first `prefix` characters) occurs in the normalized haystack as
    whole words: a short prompt like "yes" must not be found inside "eyes"."""
    needle = normalize(fact)
    whole = prefix is None or len(needle) <= prefix
    if not whole:
        needle = needle[:prefix].rstrip()
    if not needle:
        return True
    # str.find is far faster than a regular expression with look-arounds on a long haystack.
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        clear_before = start == 0 or not _is_word(haystack[start - 1])
        clear_after = not whole or end == len(haystack) or not _is_word(haystack[end])
        if clear_before and clear_after:
            return True
        start = haystack.find(needle, start + 1)
    return False


def _ledger_prompt(prompt: str) -> str:
    """The prompt's head, at least LEDGER_PROMPT_CHARS characters once whitespace is
    normalized (so the ledger always carries the part the check compares)."""
    wanted = min(LEDGER_PROMPT_CHARS, len(normalize(prompt)))
    end = LEDGER_PROMPT_CHARS
    while end < len(prompt) and len(normalize(prompt[:end])) < wanted:
        end += LEDGER_PROMPT_CHARS
    if end >= len(prompt):
        return prompt
    return f"{prompt[:end]} [... {len(prompt) - end} characters cut ...]"


def _bullets(items: Sequence[str]) -> str:
    # Continuation lines are indented so the list reads (and parses) as one item per fact.
    return "\n".join("- " + item.replace("\n", "\n  ") for item in items)


def retention(
    summarized: list[Message], summary_text: str, kept: list[Message]
) -> tuple[Retention, str | None]:
    """How many of the summarized messages' facts survive in `summary_text` or in the kept
    messages, and a ledger of the missing ones (None when nothing is missing).

    Facts: every user prompt (its first 200 characters, whitespace-insensitive), every path a
    tool call or attachment touched, every error's first line. The figures describe
    `summary_text` as given; with the ledger appended, every fact is found.
    """
    haystack = normalize(summary_text) + "\n" + message_haystack(kept)
    prompts = _unique(prompt_texts(summarized))
    paths = _unique([touch.path for touch in touched_paths(summarized)])
    errors = _unique([fact.line for fact in error_facts(summarized)])

    missing_prompts = [p for p in prompts if not _found(haystack, p, PROMPT_PREFIX_CHARS)]
    missing_paths = [p for p in paths if not _found(haystack, p)]
    missing_errors = [e for e in errors if not _found(haystack, e)]

    figures = Retention(
        prompts=RetentionFigure(kept=len(prompts) - len(missing_prompts), total=len(prompts)),
        paths=RetentionFigure(kept=len(paths) - len(missing_paths), total=len(paths)),
        errors=RetentionFigure(kept=len(errors) - len(missing_errors), total=len(errors)),
    )
    if not (missing_prompts or missing_paths or missing_errors):
        return figures, None
    parts = [LEDGER_HEADING]
    if missing_prompts:
        parts.append(
            "### User messages (verbatim, long ones cut)\n"
            + _bullets([_ledger_prompt(p) for p in missing_prompts])
        )
    if missing_paths:
        parts.append("### Files touched\n" + _bullets(missing_paths))
    if missing_errors:
        parts.append("### Errors seen\n" + _bullets(missing_errors))
    return figures, "\n\n".join(parts)
