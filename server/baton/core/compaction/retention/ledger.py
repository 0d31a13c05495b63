"""Retention of a compaction (prompts, paths, errors that survived) and the bounded fact ledger."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from baton.core.compaction.retention.facts import (
    CountText,
    approx_tokens,
    message_haystack,
    normalize,
    touched_paths,
)
from baton.core.compaction.retention.ledger_text import (
    LEDGER_HEADING,
    LEDGER_MAX_TOKENS,
    PROMPT_PREFIX_CHARS,
    STANDING_TITLE,
    write_ledger,
)
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.retention.summary_facts import carried_facts
from baton.core.conversation.boundary import Retention, RetentionFigure
from baton.core.conversation.messages import Message

__all__ = ["PROMPT_PREFIX_CHARS", "Unkept", "found_in", "retention", "unkept"]


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def found_in(haystack: str, needle: str, prefix: int | None = None) -> bool:
    """Whether the normalized fact `needle` (or its first `prefix` characters) occurs in the
    normalized haystack as whole words: a short prompt like "yes" must not be found inside
    "eyes"."""
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


@dataclass(frozen=True)
class Unkept:
    """The span's prompts, errors and standing instructions that neither a summary nor the
    kept messages carry, found ahead of the commit (off the event loop: tens of thousands
    of prompts on a long span). They do not depend on the files the commit restores; the
    paths, which do, are checked at the commit. Used for the summary it was found for."""

    summary_text: str
    prompts: list[str]
    errors: list[str]
    instructions: list[str]


def unkept(facts: SpanFacts, summary_text: str, kept: list[Message]) -> Unkept:
    """What of `facts` (the summarized span's) neither `summary_text` nor `kept` carries."""
    haystack = normalize(summary_text) + "\n" + message_haystack(kept)
    prefix = PROMPT_PREFIX_CHARS
    return Unkept(
        summary_text,
        [p for p, key in facts.unique_prompts.items() if not found_in(haystack, key, prefix)],
        [e for e, key in facts.unique_errors.items() if not found_in(haystack, key)],
        [i for i, key in facts.unique_instructions.items() if not found_in(haystack, key)],
    )


def retention(
    summarized: list[Message],
    summary_text: str,
    kept: list[Message],
    *,
    budget: int = LEDGER_MAX_TOKENS,
    count_text: CountText = approx_tokens,
    transcript_path: str | None = None,
    facts: SpanFacts | None = None,
    restored: Sequence[str] = (),
    ahead: Unkept | None = None,
) -> tuple[Retention, str | None]:
    """How many of the summarized messages' facts survive in `summary_text` or in the kept
    messages, and a ledger of the missing ones (None when nothing is missing).

    Facts: every user prompt (its first 200 characters, whitespace-insensitive), every path
    a tool call or attachment touched, every error's first line, every standing instruction
    (quoted whole), and those an earlier summary among the summarized messages quoted. A
    path survives in the summary or as a path a kept message touches; the others anywhere in
    the kept messages. The figures describe `summary_text` as given. The ledger stays within
    `budget` tokens as `count_text` counts them; when the full one does not fit it is
    shortened (see `ledger_text`) and says what it left out and that `transcript_path` holds
    the full text. With the full ledger appended, every fact is found. `facts` are the
    summarized messages' facts when the caller has them already (the summarizer was given
    the same ones). The paths of the files the compaction restores (`restored`) are kept.
    `ahead`: the other facts not carried, found ahead for this summary (`unkept`).
    """
    if facts is None:
        facts = SpanFacts.extract(summarized)
    if ahead is None or ahead.summary_text != summary_text:
        ahead = unkept(facts, summary_text, kept)
    summary = normalize(summary_text)
    # A path survives when the summary names it or a kept message touches it (a path only
    # mentioned in a kept tool result's output would not be a fact of the next round).
    kept_paths = [touch.path for touch in touched_paths(kept)]
    kept_paths += [touch.path for facts in carried_facts(kept) for touch in facts.paths]
    kept_paths += restored
    path_haystack = summary + "\n" + normalize("\n".join(kept_paths))
    prompts, paths, errors = facts.unique_prompts, facts.unique_paths, facts.unique_errors

    missing = (
        ahead.prompts,
        [p for p, key in paths.items() if not found_in(path_haystack, key)],
        ahead.errors,
    )
    standing = facts.unique_instructions
    lost = ahead.instructions
    figures = Retention(
        prompts=RetentionFigure(kept=len(prompts) - len(missing[0]), total=len(prompts)),
        paths=RetentionFigure(kept=len(paths) - len(missing[1]), total=len(paths)),
        errors=RetentionFigure(kept=len(errors) - len(missing[2]), total=len(errors)),
        instructions=RetentionFigure(kept=len(standing) - len(lost), total=len(standing))
        if standing
        else None,
    )
    if not any(missing) and not lost:
        return figures, None
    # Standing instructions are never cut: they head the ledger whole, outside its budget.
    ledger = write_ledger(*missing, budget, count_text, transcript_path) if any(missing) else ""
    if not lost:
        return figures, ledger
    quoted = "\n".join(f'- "{" ".join(item.split())}"' for item in lost)
    head = f"{LEDGER_HEADING}\n\n{STANDING_TITLE}\n{quoted}"
    rest = ledger.removeprefix(LEDGER_HEADING).lstrip("\n")
    return figures, f"{head}\n\n{rest}" if rest else head
