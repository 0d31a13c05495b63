"""Diagnostics on a session document: context usage and conversation health (BEHAVIOR 7)."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from baton.core.compaction.automatic.auto import REFILL_TURNS, THRASH_LIMIT
from baton.core.conversation.invariants import unanswered_tool_uses
from baton.core.conversation.messages import Message
from baton.core.usage.budget import Usage
from baton.core.usage.wording import headline
from baton.lsp.session_document.markdown import code_units
from baton.lsp.session_document.render import (
    USAGE_LINE,
    LazyRendering,
    RenderedSession,
    Section,
)

SOURCE = "baton"
USAGE_CODE = "context-usage"
LARGE_CODE = "large-message"
UNPAIRED_CODE = "unpaired-tool-call"
DAMAGED_CODE = "damaged-transcript"
THRASHING_CODE = "auto-compact-thrashing"
LARGE_SHARE = 0.05  # a message over 5% of the window gets a hint


def usage_message(usage: Usage, paused_by: str | None = None) -> str:
    """The usage's one sentence, as the server words it for every client (`Usage.text`).
    `paused_by` ("failures" / "thrashing") is for a usage that does not say it yet."""
    if paused_by in ("failures", "thrashing") and usage.auto_compact_paused_by is None:
        paused = {"auto_compact_paused": True, "auto_compact_paused_by": paused_by}
        return headline(usage.model_copy(update=paused))
    return usage.text.headline or headline(usage)


def usage_severity(usage: Usage) -> types.DiagnosticSeverity:
    if usage.state in ("error", "blocking") or usage.auto_compact_paused:
        return types.DiagnosticSeverity.Error
    if usage.state == "warning":
        return types.DiagnosticSeverity.Warning
    return types.DiagnosticSeverity.Information


def build_diagnostics(
    rendered: RenderedSession | LazyRendering,
    messages: Sequence[Message],
    usage: Usage,
    encoding: str = "utf-16",
    damage: Sequence[str] = (),
    paused_by: str | None = None,
    unpaired: Sequence[tuple[str, str]] | None = None,
) -> list[types.Diagnostic]:
    """The usage diagnostic, one for a damaged transcript (`damage` says what it lost), one
    when auto-compact stopped because it thrashed (`paused_by` "thrashing"), then hints on
    large messages and warnings on unpaired tool calls (`unpaired`, as the session keeps
    them, or found in `messages`). Built from the usage, the messages' counts and the
    rendering's sections (a `LazyRendering` renders only when one is needed): the rendered
    text is never looked at."""
    width = code_units(rendered.header[USAGE_LINE], encoding)
    out = [
        types.Diagnostic(
            range=_line_range(USAGE_LINE, width),
            message=usage_message(usage, paused_by),
            severity=usage_severity(usage),
            code=USAGE_CODE,
            source=SOURCE,
        )
    ]
    if damage:
        out.append(
            types.Diagnostic(
                range=_line_range(USAGE_LINE, width),
                message="Transcript damaged: " + "; ".join(damage),
                severity=types.DiagnosticSeverity.Warning,
                code=DAMAGED_CODE,
                source=SOURCE,
            )
        )
    if paused_by == "thrashing" and usage.auto_compact_paused:
        out.append(
            types.Diagnostic(
                range=_line_range(USAGE_LINE, width),
                message=thrashing_message(usage),
                severity=types.DiagnosticSeverity.Warning,
                code=THRASHING_CODE,
                source=SOURCE,
            )
        )
    limit = usage.context_window * LARGE_SHARE
    for message in messages:
        if message.tokens <= limit:
            continue
        section = rendered.by_id.get(message.id)
        if section is None:
            continue
        share = 100 * message.tokens / usage.context_window
        out.append(
            types.Diagnostic(
                range=_heading_range(section),
                message=f"Large message: {message.tokens:,} tokens ({share:.1f}% of the window)",
                severity=types.DiagnosticSeverity.Hint,
                code=LARGE_CODE,
                source=SOURCE,
            )
        )
    for message_id, text in unpaired_tool_calls(messages) if unpaired is None else unpaired:
        section = rendered.by_id.get(message_id)
        if section is not None:
            out.append(
                types.Diagnostic(
                    range=_heading_range(section),
                    message=text,
                    severity=types.DiagnosticSeverity.Warning,
                    code=UNPAIRED_CODE,
                    source=SOURCE,
                )
            )
    return out


def thrashing_message(usage: Usage) -> str:
    """Why auto-compact stopped, and how to go on (BEHAVIOR 3, the thrash guard): in the
    request's bytes while they, not its tokens, are what is over (the images and documents
    it is sent)."""
    size = usage.request_size
    if usage.used_tokens < usage.auto_compact_threshold and size is not None and size.over:
        return (
            f"Auto-compact stopped: the images and documents sent refilled the request past "
            f"the API's 32 MB ({size.limit:,} bytes) within {REFILL_TURNS} turns of each of "
            f"the last {THRASH_LIMIT} auto-compactions, however few its tokens, so they do "
            "not fit in one request. Send fewer images or documents at a time. Compact "
            "manually (up to the last of them: a summary keeps no image or document) to "
            "resume auto-compact, or start a new session."
        )
    return (
        f"Auto-compact stopped: the context refilled past the auto-compact threshold "
        f"({usage.auto_compact_threshold:,} tokens) within {REFILL_TURNS} turns of each of "
        f"the last {THRASH_LIMIT} auto-compactions, so the working set does not fit in the "
        "context window. A file read or a tool result is likely too large for it: read "
        "files in smaller parts or trim tool output. Compact manually to resume "
        "auto-compact, or start a new session."
    )


def unpaired_tool_calls(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(message id, problem) for each tool_use nobody answered and each orphaned result.

    The trailing assistant turn's open calls are not problems: the client is about to
    append their results.
    """
    awaiting = {u.id for u in unanswered_tool_uses(messages)}
    uses: dict[str, str] = {}
    answered: set[str] = set()
    problems: list[tuple[str, str]] = []
    for message in messages:
        for use in message.tool_uses():
            uses[use.id] = message.id
        for result in message.tool_results():
            if result.tool_use_id not in uses:
                problems.append(
                    (message.id, f"tool_result {result.tool_use_id} answers no tool_use in view")
                )
            answered.add(result.tool_use_id)
    for use_id, message_id in uses.items():
        if use_id not in answered and use_id not in awaiting:
            problems.append((message_id, f"tool_use {use_id} has no tool_result"))
    return problems


def _line_range(line: int, width: int) -> types.Range:
    return types.Range(
        start=types.Position(line=line, character=0),
        end=types.Position(line=line, character=width),
    )


def _heading_range(section: Section) -> types.Range:
    return _line_range(section.start_line, section.heading_character)
