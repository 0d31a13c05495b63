"""Hover text on a session document: a message's size, or what auto-compact would do now."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from baton.core.budget import UNATTRIBUTED_LABEL, Usage
from baton.core.messages import Message
from baton.lsp.diagnostics import usage_message


def message_hover(message: Message, usage: Usage) -> str:
    share = 100 * message.tokens / usage.context_window if usage.context_window else 0.0
    lines = [
        f"**{message.role} {message.kind}** `{message.id}`",
        "",
        f"{message.tokens:,} tokens, {share:.1f}% of the {usage.context_window:,}-token window",
    ]
    if message.pinned:
        lines.append("")
        lines.append("Pinned: compaction never summarizes it.")
    return "\n".join(lines)


def usage_hover(
    usage: Usage,
    plan: tuple[Sequence[str], Sequence[str]] | None,
    messages: Mapping[str, Message],
    reason: str | None = None,
) -> str:
    """`plan` is (summarized ids, kept ids) of an auto-compact dry run; None when there is
    nothing to summarize, or when no plan could be made (`reason` says why)."""
    lines = [f"**{usage_message(usage)}**", ""]
    estimated = " (estimated)" if usage.estimated else ""
    lines.append(
        f"Used {usage.used_tokens:,} of {usage.effective_window:,} usable tokens{estimated}; "
        f"warning at {usage.warning_threshold:,}, auto-compact at "
        f"{usage.auto_compact_threshold:,}, blocked at {usage.blocking_limit:,}."
    )
    lines.append("")
    lines.append(breakdown_line(usage))
    lines.append("")
    if plan is None and reason:
        lines.append(f"Auto-compact cannot plan right now: {reason}.")
        return "\n".join(lines)
    if plan is None:
        lines.append("Auto-compact would have nothing to summarize now.")
        return "\n".join(lines)
    summarized, kept = plan
    summarized_tokens = sum(messages[m].tokens for m in summarized if m in messages)
    kept_tokens = sum(messages[m].tokens for m in kept if m in messages)
    lines.append(
        f"Auto-compact now would summarize {_count(len(summarized))} "
        f"({summarized_tokens:,} tokens) and keep the latest {_count(len(kept))} "
        f"({kept_tokens:,} tokens) verbatim."
    )
    return "\n".join(lines)


def breakdown_line(usage: Usage) -> str:
    """The used tokens by category (those that hold any), then what is free."""
    parts = usage.breakdown
    figures = [
        ("system prompt", parts.system),
        ("tools", parts.tools),
        ("messages", parts.messages),
        ("summary", parts.summary),
        ("attachments", parts.attachments),
        (f"unattributed ({UNATTRIBUTED_LABEL})", parts.unattributed),
    ]
    used = [f"{name} {tokens:,}" for name, tokens in figures if tokens > 0]
    return f"By category: {' · '.join(used) or 'nothing yet'}; free {parts.free:,}."


def _count(n: int) -> str:
    return f"{n} message{'s' if n != 1 else ''}"
