"""Plain-text reports for the command line: usage figures, the category chart, imports."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from baton.core.conversation.messages import Message
from baton.core.importers.claude_code import ImportReport
from baton.core.usage.budget import Usage
from baton.core.usage.wording import paused_why, share_used, unattributed_note

BAR_WIDTH = 40
EIGHTHS = " ▏▎▍▌▋▊▉"  # partial blocks, by eighths of a cell
FULL = "█"
CATEGORIES = ("system", "tools", "messages", "summary", "attachments", "unattributed", "free")


def bar(value: int, total: int, width: int = BAR_WIDTH, *, ascii_only: bool = False) -> str:
    """`value` out of `total` as a bar of block characters, `width` cells wide (of "#",
    whole cells, with `ascii_only`: an output that has no block characters)."""
    if total <= 0 or value <= 0:
        return ""
    if ascii_only:  # something non-zero is never drawn as nothing
        return "#" * max(1, round(min(value, total) / total * width))
    eighths = round(min(value, total) / total * width * 8)
    if eighths == 0:
        return EIGHTHS[1]  # something non-zero is never drawn as nothing
    full, rest = divmod(eighths, 8)
    return FULL * full + (EIGHTHS[rest] if rest else "")


def chart(usage: Usage, width: int = BAR_WIDTH, *, ascii_only: bool = False) -> list[str]:
    """One line per category: name, bar, tokens and share of the window (bars of "#" with
    `ascii_only`)."""
    window = usage.context_window
    figures = usage.breakdown.model_dump()
    lines = []
    for name in CATEGORIES:
        value = int(figures[name])
        share = 100 * value / window if window else 0.0
        note = f"  {unattributed_note(usage)}" if name == "unattributed" else ""
        lines.append(
            f"  {name:<12} {bar(value, window, width, ascii_only=ascii_only):<{width}} "
            f"{value:>9,}  {share:5.1f}%{note}"
        )
    return lines


def shows_blocks(encoding: str | None) -> bool:
    """Whether an output of `encoding` can show the chart's block characters."""
    try:
        (FULL + EIGHTHS).encode(encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def plain_text(messages: Iterable[Message]) -> str:
    """The view as bare text (no framing, no media): what a plain tokenizer count sees."""
    parts: list[str] = []
    for message in messages:
        for block in message.content:
            parts.extend(_block_text(block.model_dump()))
    return "\n".join(parts)


def _block_text(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [str(block.get("text") or "")]
    if kind == "thinking":
        return [str(block.get("thinking") or "")]
    if kind == "tool_use":
        return [str(block.get("name") or ""), json.dumps(block.get("input"), ensure_ascii=False)]
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return [content]
        out: list[str] = []
        for inner in content if isinstance(content, list) else []:
            if isinstance(inner, dict):
                out.extend(_block_text(inner))
        return out
    return []  # images, documents and redacted thinking have no plain text


def usage_lines(
    usage: Usage, anchored_on: str | None = None, window_from: str | None = None
) -> list[str]:
    """The figures a meter is built from, one per line; `window_from` says whose the
    window is (the Models API's, the model table's, a setting's)."""
    anchored = "anchored on real API usage" + (f" of {anchored_on}" if anchored_on else "")
    anchored += " + estimates after it"
    if usage.basis == "exact":
        how = "exact: the API's count of the view, as exactCounts asks"
    elif usage.basis == "compacted":  # an older usage still anchors it, or none does
        how = "estimated since the view changed: " + (
            anchored if anchored_on else "its estimate + what the last API usage showed besides it"
        )
    elif usage.estimated:
        how = "estimated (no API usage to anchor on)"
    else:
        how = anchored
    reserved = usage.context_window - usage.effective_window
    lines = [
        f"Used tokens     {usage.used_tokens:,} ({how})",
        f"Context window  {usage.context_window:,} ({usage.model}"
        + (f", {window_from})" if window_from else ")"),
        f"Effective       {usage.effective_window:,} ({reserved:,} held back for a summary)",
        "Thresholds      "
        f"warning {usage.warning_threshold:,} · auto-compact {usage.auto_compact_threshold:,} · "
        f"error {usage.error_threshold:,} · blocking {usage.blocking_limit:,}",
        f"Used / left     {share_used(usage):.1f}% of the window used · {left_words(usage)}",
        f"State           {state_words(usage)}",
    ]
    lines.extend(f"Warning         {w}" for w in usage.warnings)
    return lines


def left_words(usage: Usage) -> str:
    """ "87% left until auto-compact", or until the effective window when auto-compact is off
    (`baton usage` and `baton import` say it alike)."""
    left_of = "auto-compact" if usage.auto_compact_enabled else "the effective window"
    return f"{usage.percent_left}% left until {left_of}"


def state_words(usage: Usage) -> str:
    """The state, and auto-compact's when it does not run: "ok (auto-compact off)"."""
    paused = usage.auto_compact_paused
    return (
        usage.state
        + ("" if usage.auto_compact_enabled else " (auto-compact off)")
        + (f" (auto-compact {paused_why(usage.auto_compact_paused_by)})" if paused else "")
    )


def plain_count_line(plain: int, used: int) -> str:
    if plain <= 0:
        return "Plain cl100k count of the view's text: 0 tokens"
    diff = 100 * (used - plain) / plain
    return f"Plain cl100k count of the view's text: {plain:,} tokens (used is {diff:+.1f}%)"


def estimate_line(estimate: int) -> str:
    # an anchored figure also holds what the file cannot show: the client's system prompt,
    # tool definitions and the model's own tokenizer; this line shows the view alone
    return f"Estimate of the view alone:            {estimate:,} tokens (no API anchor)"


def import_lines(report: ImportReport) -> list[str]:
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(report.kinds.items()))
    lines = [
        f"Records         {report.records:,} ({kinds})",
        f"Imported        {report.messages:,} messages, {report.tool_pairs:,} tool calls "
        f"with results, {report.boundaries} compaction(s), {report.opaque:,} opaque records"
        + (f" ({report.sidechain:,} from subagents)" if report.sidechain else ""),
    ]
    lines.extend(f"Note            {note}" for note in report.notes())
    return lines


def usage_report(
    *,
    title: str,
    source: str,
    settings_from: str,
    messages: Sequence[Message],
    usage: Usage,
    plain_tokens: int,
    imported: ImportReport | None = None,
    anchored_on: str | None = None,
    estimate_only: int | None = None,
    window_from: str | None = None,
    ascii_only: bool = False,
) -> str:
    lines = [
        f"Session         {title}",
        f"Source          {source}",
        f"Settings        {settings_from}",
    ]
    if imported is not None:
        lines.extend(import_lines(imported))
    lines.append(f"View            {len(messages):,} messages")
    lines.append("")
    lines.extend(usage_lines(usage, anchored_on, window_from))
    lines.append("")
    lines.append(f"Context by category (of {usage.context_window:,} tokens)")
    lines.extend(chart(usage, ascii_only=ascii_only))
    lines.append("")
    lines.append(plain_count_line(plain_tokens, usage.used_tokens))
    if estimate_only is not None and not usage.estimated:
        lines.append(estimate_line(estimate_only))
    return "\n".join(lines)
