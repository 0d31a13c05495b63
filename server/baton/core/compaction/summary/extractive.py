"""The extractive summary's sections, each built from the conversation's structure and bounded."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from baton.core.compaction import slices
from baton.core.compaction.cuts import CountText, common_cap, cut_to_tokens, cut_with_marker
from baton.core.compaction.retention.blocks import failed_results
from baton.core.compaction.retention.error_facts import ErrorFact
from baton.core.compaction.retention.facts import PathTouch, split_summary_prompts
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.retention.standing import standing_block, without_standing
from baton.core.compaction.retention.summary_facts import (
    prose_sections,
    summary_body,
    summary_text,
    unquoted,
)
from baton.core.compaction.retention.symbols import edited_symbols, symbols_line
from baton.core.compaction.summary.user_messages import bullet, indent
from baton.core.conversation.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

# Share of the summary each section may use; the user-messages section gets the rest.
SHARES = {1: 0.06, 2: 0.04, 3: 0.10, 4: 0.08, 5: 0.04, 7: 0.05, 8: 0.08, 9: 0.05}
_CHANGED = {"edited", "written"}
# An earlier summary's section is condensed to no less than this (its first words).
CARRIED_FLOOR_TOKENS = 16
_TERM = re.compile(
    r"`([^`\n]{2,60})`"
    r"|\b([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b"
)
# Every term holds a backtick, an underscore or a capital after a lowercase letter or digit;
# most prose holds none. The capital is searched first: a pattern that starts with a class
# of 26 letters skips the rest of the text in C, where `[a-z0-9][A-Z]` tries nearly every
# position.
_CAPITAL_AFTER_LOWER = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])")


@dataclass
class Facts:
    """What the extractive summary is built from, gathered in one pass."""

    prompts: list[str] = field(default_factory=list)  # earlier summaries' then the span's
    span_prompts: list[str] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)  # earlier summaries minus their prompts
    paths: list[PathTouch] = field(default_factory=list)
    errors: list[ErrorFact] = field(default_factory=list)
    tool_calls: Counter[str] = field(default_factory=Counter)
    failed_calls: int = 0
    replies: int = 0
    todos: list[dict[str, Any]] | None = None
    trailing_prompts: list[str] = field(default_factory=list)
    last_reply: str = ""
    terms: Counter[str] = field(default_factory=Counter)
    instructions: list[str] = field(default_factory=list)  # standing ones, verbatim
    symbols: list[str] = field(default_factory=list)  # names of the symbols edited

    @classmethod
    def gather(cls, messages: Sequence[Message], span: SpanFacts | None = None) -> Facts:
        """The facts of `messages`; `span` are their shared facts when extracted already."""
        if span is None:
            span = SpanFacts.extract(messages)
        facts = cls(paths=span.paths, errors=span.errors, instructions=span.instructions)
        facts.symbols = edited_symbols(messages)
        for message in messages:  # blocks tested by exact type: see `blocks`
            text = summary_text(message)
            if text is not None:  # an earlier summary: its facts are in `span`
                prompts, rest = split_summary_prompts(summary_body(text))
                facts.prompts.extend(unquoted(prompt) for prompt in prompts)
                rest = without_standing(rest)
                if rest.strip():
                    facts.carried.append(rest.strip())
                facts.failed_calls += failed_results(message.content)
            elif message.role == "assistant":
                facts._note_assistant(message)
            else:
                facts._note_user(message, span)
        return facts

    def _note_user(self, message: Message, span: SpanFacts) -> None:
        results = failed = 0
        for block in message.content:
            if type(block) is ToolResultBlock:
                results += 1
                failed += 1 if block.is_error else 0
        self.failed_calls += failed
        if message.kind != "message" or (results and results == len(message.content)):
            return  # an attachment, or tool results only: no prompt
        text = span.prompt_text(message)
        if text:
            self.prompts.append(text)
            self.span_prompts.append(text)
            self.trailing_prompts.append(text)
            self.terms.update(_terms(text))

    def _note_assistant(self, message: Message) -> None:
        has_text = False
        for block in message.content:
            if type(block) is ToolUseBlock:
                self.tool_calls[block.name] += 1
                todos = block.input.get("todos") if isinstance(block.input, dict) else None
                if isinstance(todos, list):
                    self.todos = [t for t in todos if isinstance(t, dict)]
            elif type(block) is TextBlock:
                has_text = has_text or bool(block.text.strip())
            elif type(block) is ToolResultBlock and block.is_error:
                self.failed_calls += 1
        if has_text:
            self.replies += 1
            self.last_reply = message.text().strip()
            self.trailing_prompts.clear()
            self.terms.update(_terms(self.last_reply))


def _may_hold_terms(text: str) -> bool:
    return "_" in text or "`" in text or slices.search(_CAPITAL_AFTER_LOWER, text, 1) is not None


def _terms(text: str) -> list[str]:
    """The terms of `text`, as `_TERM.findall` finds them. No term spans a line break, and
    no match crosses one, so only the lines that may hold a term are scanned (the regex
    tries every position of what it scans; a reply's prose lines mostly hold none)."""
    if not _may_hold_terms(text):
        return []
    lines = "\n".join(line for line in text.split("\n") if _may_hold_terms(line))
    return [quoted or word for quoted, word in _TERM.findall(lines)]


def fit_lines(lines: Sequence[str], cap: int, count: CountText) -> str:
    """As many lines as fit in `cap` tokens, then one line saying how many were left out.
    Line counts are added up (splitting at newlines barely changes a token count)."""
    sizes = [count(line) + 1 for line in lines]
    if sum(sizes) <= cap:
        return "\n".join(lines)
    room = cap - count(f"- ... and {len(lines)} more") - 1
    kept: list[str] = []
    for line, size in zip(lines, sizes, strict=True):
        if size > room:
            break
        kept.append(line)
        room -= size
    return "\n".join([*kept, f"- ... and {len(lines) - len(kept)} more"])


def section_builders(
    facts: Facts, limit: int, count: CountText
) -> list[tuple[int, Callable[[], str]]]:
    """One builder per section except the user messages (6), in section order."""

    def cap(number: int) -> int:
        return int(limit * SHARES[number])

    return [
        (1, lambda: _primary(facts, cap(1), count)),
        (2, lambda: _concepts(facts, cap(2), count)),
        (3, lambda: _files(facts, cap(3), count)),
        (4, lambda: _errors(facts, cap(4), count)),
        (5, lambda: _problem_solving(facts, cap(5), count)),
        (7, lambda: _pending(facts, cap(7), count)),
        (8, lambda: _current(facts, cap(8), count)),
        (9, lambda: _next_step(facts, cap(9), count)),
    ]


def _primary(facts: Facts, cap: int, count: CountText) -> str:
    # The standing instructions come first, whole: they are facts, outside the share.
    parts: list[str] = [standing_block(facts.instructions)] if facts.instructions else []
    cap += count(parts[0]) if parts else 0
    if facts.carried:
        earlier = _condensed(facts.carried, cap // 2, count)
        parts.append("Carried from an earlier summary (condensed):\n  " + indent(earlier))
    if facts.span_prompts:
        room = cap - count("\n\n".join(parts)) - 20
        first = cut_with_marker(facts.span_prompts[0], max(room, 0), count)
        parts.append("The first request in this part, verbatim:\n  " + indent(first))
        parts.append("Every user message follows in section 6; the latest is quoted in section 9.")
    elif not parts:
        parts.append("No user request in this part.")
    return "\n".join(parts)


def _condensed(carried: Sequence[str], cap: int, count: CountText) -> str:
    """Earlier summaries' prose within `cap`: their files and errors lists left out (their
    facts are carried in sections 3 and 4), each other section cut to a common length, so
    the latest state is condensed as much as the first request."""
    parts = [part for text in carried for part in prose_sections(text)]
    sizes = [count(part) + 1 for part in parts]
    if sum(sizes) <= cap:
        return "\n\n".join(parts)
    share = common_cap(sizes, cap, CARRIED_FLOOR_TOKENS)
    if share is None:  # too many to give each its first words: the whole, cut
        return cut_with_marker("\n\n".join(parts), cap, count)
    return "\n\n".join(cut_with_marker(part, share - 1, count) for part in parts)


def _concepts(facts: Facts, cap: int, count: CountText) -> str:
    lines: list[str] = []
    suffixes = Counter(
        PurePath(t.path).suffix.lower() for t in facts.paths if PurePath(t.path).suffix
    )
    if suffixes:
        ranked = sorted(suffixes.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("- File types: " + ", ".join(f"{s} ({n})" for s, n in ranked[:8]))
    terms = sorted(facts.terms.items(), key=lambda kv: (-kv[1], kv[0]))
    frequent = [kv for kv in terms if kv[1] >= 2] or terms[:5]
    if frequent:
        lines.append("- Terms used most: " + ", ".join(f"`{t}` ({n})" for t, n in frequent[:12]))
    if facts.tool_calls:
        lines.append("- Tools: " + ", ".join(sorted(facts.tool_calls)))
    return fit_lines(lines, cap, count) if lines else "- None stood out."


def _files(facts: Facts, cap: int, count: CountText) -> str:
    symbols = symbols_line(facts.symbols)
    listed = (
        _file_list(facts, cap - count(symbols), count) if symbols else _file_list(facts, cap, count)
    )
    return f"{listed}\n{symbols}" if symbols else listed


def _file_list(facts: Facts, cap: int, count: CountText) -> str:
    if not facts.paths:
        return "- No files were touched."
    lines = [f"- {t.path} ({', '.join(t.ops)})" for t in facts.paths]
    if count("\n".join(lines)) <= cap:
        return "\n".join(lines)
    # Short of space, changed files win over files only read or searched; order is kept.
    order = sorted(range(len(lines)), key=lambda i: (not _CHANGED & set(facts.paths[i].ops), i))
    room = cap - count(f"- ... and {len(lines)} more") - 1
    chosen: list[int] = []
    for index in order:
        size = count(lines[index]) + 1
        if size <= room:
            chosen.append(index)
            room -= size
    listed = [lines[i] for i in sorted(chosen)]
    return "\n".join([*listed, f"- ... and {len(lines) - len(chosen)} more"])


def _errors(facts: Facts, cap: int, count: CountText) -> str:
    if not facts.errors:
        return "- No errors were seen."
    lines = [f"- {e.line}" + (f" (at {e.location})" if e.location else "") for e in facts.errors]
    return fit_lines(lines, cap, count)


def _problem_solving(facts: Facts, cap: int, count: CountText) -> str:
    total = sum(facts.tool_calls.values())
    lines = [
        f"- {facts.replies} assistant replies, {total} tool calls ({facts.failed_calls} failed)."
    ]
    if facts.tool_calls:
        ranked = sorted(facts.tool_calls.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("- Tool calls by tool: " + ", ".join(f"{n} {c}" for n, c in ranked))
    changed = sum(1 for t in facts.paths if _CHANGED.intersection(t.ops))
    lines.append(f"- Files changed: {changed}; other paths touched: {len(facts.paths) - changed}.")
    return fit_lines(lines, cap, count)


def _pending(facts: Facts, cap: int, count: CountText) -> str:
    if facts.todos is not None:
        open_items = [t for t in facts.todos if t.get("status") != "completed"]
        done = len(facts.todos) - len(open_items)
        lines = [f"- Task list: {done} of {len(facts.todos)} done."]
        lines += [f"- [{t.get('status', '?')}] {t.get('content', '')}" for t in open_items]
        return fit_lines(lines, cap, count)
    if facts.trailing_prompts:
        share = max(cap // len(facts.trailing_prompts) - 4, 0)
        lines = ["- Not answered yet:"]
        lines += [bullet(cut_with_marker(p, share, count)) for p in facts.trailing_prompts]
        return fit_lines(lines, cap, count)
    return "- None recorded."


def _current(facts: Facts, cap: int, count: CountText) -> str:
    if not facts.last_reply:
        return "No assistant reply in this part."
    return "The last assistant reply:\n  " + indent(cut_with_marker(facts.last_reply, cap, count))


def _next_step(facts: Facts, cap: int, count: CountText) -> str:
    candidates = facts.span_prompts or facts.prompts
    if not candidates:
        return "No user request to continue from."
    latest = candidates[-1]
    quoted = cut_with_marker(latest, max(cap - 12, 0), count)
    return 'Continue from the latest user request, verbatim:\n  "' + indent(quoted) + '"'


def hard_cut(text: str, limit: int, count: CountText) -> str:
    """Last resort for absurdly small limits: the summary's head within `limit`."""
    return cut_to_tokens(text, limit, count)
