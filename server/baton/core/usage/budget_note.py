"""The budget note: near the thresholds each reply request tells the model how much of its
context is used, what is left and where auto-compact fires. Sent, counted in the request's
room, never stored in the transcript; off with `budgetNote.enabled`.

Models that document context awareness (`CONTEXT_AWARE`) get it as they know it, a
`<system_warning>Token usage: used/window; left remaining</system_warning>` block; other
models a plain `[Context budget: ...]` note. Either is a last text block of the last user
turn, never the system prompt: a system prompt that changed with every request would make
the prompt cache miss on everything after it. Only a request whose last message is not the
user's (none is sent so) would get it as a paragraph of the system prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from baton.core.models.windows import longest_prefix, model_name
from baton.core.settings import Settings
from baton.core.usage.budget import Budget, Usage
from baton.core.usage.wording import PausedBy, paused_why

# The families whose documentation describes context awareness (the token budget and the
# `<system_warning>` usage lines), by the model table's prefixes.
CONTEXT_AWARE = (
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-sonnet-4-6",
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-sonnet-5",
    "claude-opus-5",
    "claude-fable-5",
    "claude-mythos",
)


def context_aware(model: str) -> bool:
    return longest_prefix(model_name(model)[0], CONTEXT_AWARE) is not None


def note_due(usage: Usage, settings: Settings) -> bool:
    """Whether the request carries the note: on, and the context at or past the start."""
    return _due(usage.used_tokens, usage.warning_threshold, settings)


def _due(used: int, warning: int, settings: Settings) -> bool:
    note = settings.budget_note
    if not note.enabled:
        return False
    start = note.start_tokens if note.start_tokens is not None else warning
    return used >= start


def _compact_clause(settings: Settings, paused_by: PausedBy | None, threshold: int) -> str:
    """`paused_by`: why auto-compact is paused, None while it fires."""
    if not settings.auto_compact.enabled:
        return "auto-compact is off"
    if paused_by is not None:  # it will not fire: the note must not say it will
        return f"auto-compact is {paused_why(paused_by)}"
    return f"auto-compact summarizes the conversation at {threshold:,} tokens"


def note_text(usage: Usage, settings: Settings, model: str) -> str:
    """The note in the form the model's family takes."""
    paused = usage.auto_compact_paused_by if usage.auto_compact_paused else None
    clause = _compact_clause(settings, paused, usage.auto_compact_threshold)
    return _text(usage.used_tokens, usage.context_window, clause, model)


def _text(used: int, window: int, clause: str, model: str) -> str:
    left = max(0, window - used)
    if context_aware(model):
        return (
            f"<system_warning>Token usage: {used}/{window}; {left} remaining. "
            f"{clause[0].upper()}{clause[1:]}.</system_warning>"
        )
    return f"[Context budget: {used:,} of {window:,} tokens used, {left:,} left; {clause}.]"


def next_note_tokens(
    used: int,
    budget: Budget,
    settings: Settings,
    paused_by: PausedBy | None,
    model: str,
    count: Callable[[str], int],
) -> int:
    """The tokens of the note the next request carries with `used` tokens besides it (0
    when it is not due), as it will say the figure with itself in it: what the meter adds
    so that its figure is that request's."""
    if not _due(used, budget.warning_threshold, settings):
        return 0
    clause = _compact_clause(settings, paused_by, budget.auto_compact_threshold)
    tokens = count(_text(used, budget.context_window, clause, model))
    return count(_text(used + tokens, budget.context_window, clause, model))


def with_budget_note(
    note: str, model: str, system: str | None, messages: list[dict[str, Any]]
) -> tuple[str | None, list[dict[str, Any]]]:
    """The request's system prompt and messages with the note: a text block at the end of
    the last user message (a paragraph of the system prompt when the last message is not
    the user's). `messages` are not changed (the last one is copied)."""
    del model  # the note's text already has the model's form
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user":
        content = last.get("content")
        blocks = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        blocks.append({"type": "text", "text": note})
        return system, [*messages[:-1], {**last, "content": blocks}]
    return (f"{system}\n\n{note}" if system else note), messages
