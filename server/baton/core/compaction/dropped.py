"""What a compaction dropped (`Dropped` on the wire): the messages it summarized, the tool
results it cleared, the files it did not restore and why, and the facts that went.

A fact (a prompt, a path, an error line of the summarized span, as the retention figures
count them) the summary does not carry is either carried by the fact ledger appended to it
(`notInSummary`) or lost outright when the ledger had no room for it (`lost`). An edited
summary is measured as edited: the facts the edit took out show up here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from baton.core.compaction.retention.facts import message_haystack, normalize, touched_paths
from baton.core.compaction.retention.ledger import PROMPT_PREFIX_CHARS, found_in
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.conversation.boundary import SkippedFile
from baton.core.conversation.messages import Message, ToolResultBlock
from baton.core.conversation.wire_model import WireModel

LISTED = 50  # facts listed by name at most, per list (the counts are always whole)


class DroppedFacts(WireModel):
    """Facts of the summarized span, by kind, as text (prompts cut to 200 characters)."""

    prompts: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    count: int = 0  # every such fact, also those past the list's cap

    @property
    def empty(self) -> bool:
        return self.count == 0


class Dropped(WireModel):
    """What went in one compaction; `text` says it in one sentence."""

    messages_summarized: int = 0
    tool_results_cleared: int = 0
    files_not_restored: list[SkippedFile] = Field(default_factory=list)
    not_in_summary: DroppedFacts = Field(default_factory=DroppedFacts)  # only the ledger has them
    lost: DroppedFacts = Field(default_factory=DroppedFacts)  # neither the summary nor the ledger
    text: str = ""
    lines: list[str] = Field(default_factory=list)  # the same, a line each, for a list


@dataclass(frozen=True)
class FactsChecked:
    """The span's facts checked against a summary, the kept messages and a ledger, ahead of
    the commit (off the event loop: on a long span, tens of thousands of prompts, the
    checks take seconds): by kind, the prompts and errors that neither the summary nor the
    kept messages carry, each with whether the ledger does, and the paths the summary does
    not carry (the commit checks those against the paths kept and restored, which it finds
    only then). Used for the summary and ledger texts it was made with alone."""

    summary_text: str
    ledger_text: str | None
    missing: dict[str, list[tuple[str, bool]]]  # kind -> (value, the ledger carries it)
    paths: list[tuple[str, str]]  # (value, key): not in the summary


def check_facts(
    facts: SpanFacts, kept: Sequence[Message], summary_text: str, ledger_text: str | None
) -> FactsChecked:
    """`facts` (those of the summarized span) checked against `summary_text`, the `kept`
    messages and `ledger_text`, as far as they can be before the commit."""
    kept_text = message_haystack(kept)
    summary = normalize(summary_text)
    ledger = normalize(ledger_text or "")
    missing: dict[str, list[tuple[str, bool]]] = {}
    for kind, keyed in (("prompts", facts.unique_prompts), ("errors", facts.unique_errors)):
        prefix = PROMPT_PREFIX_CHARS if kind == "prompts" else None
        missing[kind] = [
            (value, found_in(ledger, key, prefix))
            for value, key in keyed.items()
            if not found_in(summary, key, prefix) and not found_in(kept_text, key, prefix)
        ]
    paths = [(v, k) for v, k in facts.unique_paths.items() if not found_in(summary, k)]
    return FactsChecked(summary_text, ledger_text, missing, paths)


def dropped(
    summarized: Sequence[Message],
    kept: Sequence[Message],
    summary_text: str,
    ledger_text: str | None,
    skipped: Sequence[SkippedFile],
    facts: SpanFacts | None = None,
    restored: Sequence[str] = (),
    checked: FactsChecked | None = None,
) -> Dropped:
    """What a compaction of `summarized` into `summary_text` (with `ledger_text`) dropped;
    the paths of the files it restores (`restored`) went nowhere. `checked`: the facts
    checked ahead (`check_facts`), used when made with the same texts."""
    facts = facts if facts is not None else SpanFacts.extract(summarized)
    same = checked is not None and (checked.summary_text, checked.ledger_text) == (
        summary_text,
        ledger_text,
    )
    if checked is None or not same:
        checked = check_facts(facts, kept, summary_text, ledger_text)
    kept_paths = normalize("\n".join([*(t.path for t in touched_paths(kept)), *restored]))
    ledger = normalize(ledger_text or "") if checked.paths else ""
    missing, lost = _Lists(), _Lists()
    for value, in_ledger in checked.missing["prompts"]:
        missing.add("prompts", value, lost if not in_ledger else None)
    for value, key in checked.paths:
        if not found_in(kept_paths, key):
            missing.add("paths", value, lost if not found_in(ledger, key) else None)
    for value, in_ledger in checked.missing["errors"]:
        missing.add("errors", value, lost if not in_ledger else None)
    cleared = sum(1 for m in summarized for block in m.content if type(block) is ToolResultBlock)
    result = Dropped(
        messages_summarized=len(summarized),
        tool_results_cleared=cleared,
        files_not_restored=list(skipped),
        not_in_summary=missing.facts(),
        lost=lost.facts(),
    )
    return result.model_copy(update={"text": sentence(result), "lines": lines(result)})


class _Lists:
    def __init__(self) -> None:
        self.by_kind: dict[str, list[str]] = {"prompts": [], "paths": [], "errors": []}
        self.count = 0

    def add(self, kind: str, value: str, also: _Lists | None = None) -> None:
        """`value` listed under `kind` (and in `also`, when given)."""
        self.count += 1
        if len(self.by_kind[kind]) < LISTED:
            self.by_kind[kind].append(value[:PROMPT_PREFIX_CHARS])
        if also is not None:
            also.add(kind, value)

    def facts(self) -> DroppedFacts:
        return DroppedFacts(**self.by_kind, count=self.count)


def lines(found: Dropped) -> list[str]:
    """What went, a line each, as the summary message keeps it (`Message.dropped`)."""
    out = [f"{_plural(found.messages_summarized, 'message')} summarized"]
    if found.tool_results_cleared:
        out.append(f"{_plural(found.tool_results_cleared, 'tool result')} cleared")
    files = found.files_not_restored  # (a session may have touched hundreds)
    out += [f"not restored: {f.uri} ({f.reason})" for f in files[:LISTED]]
    if len(files) > LISTED:
        out.append(f"{len(files) - LISTED:,} more not restored")
    for where, facts in (
        ("only in the fact ledger", found.not_in_summary),
        ("lost (the ledger had no room)", found.lost),
    ):
        if facts.count:
            named = [*(f'"{p}"' for p in facts.prompts), *facts.paths, *facts.errors]
            more = facts.count - len(named)
            tail = f" and {more:,} more" if more > 0 else ""
            out.append(f"{_plural(facts.count, 'fact')} {where}: {'; '.join(named)}{tail}")
    return out


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def sentence(found: Dropped) -> str:
    """`Summarized 12 messages, cleared 4 tool results; 1 file not restored (...); ...`"""
    parts = [f"Summarized {_plural(found.messages_summarized, 'message')}"]
    if found.tool_results_cleared:
        parts.append(f"cleared {_plural(found.tool_results_cleared, 'tool result')}")
    text = ", ".join(parts)
    if found.files_not_restored:
        reasons = sorted({f.reason for f in found.files_not_restored})
        files = _plural(len(found.files_not_restored), "file")
        text += f"; {files} not restored ({'; '.join(reasons)})"
    if found.not_in_summary.count:
        text += f"; {_plural(found.not_in_summary.count, 'fact')} only in the ledger"
    if found.lost.count:
        text += f"; {_plural(found.lost.count, 'fact')} lost (the ledger had no room)"
    return text
