"""Hovers on a session document: a message's size, or what auto-compact would do now."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.core.compaction.draft_record import CompactDraft
from baton.core.conversation.messages import Message
from baton.core.usage.budget import Usage
from baton.lsp.session_document import off_loop
from baton.lsp.session_document.client_copy import held_as_rendered
from baton.lsp.session_document.diagnostics import usage_message
from baton.lsp.session_document.render import USAGE_LINE, Section

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

_MARKS = re.compile(r"\*\*|`")  # the Markdown the hovers use: bold and inline code


async def hover_at(ls: BatonServer, session_id: str, line: int) -> types.Hover | None:
    """The hover on `line` of a session document: the usage line, or a message's section."""
    rendered, data, _ = await off_loop.rendered(ls, session_id)
    if line == USAGE_LINE:
        preview, reason = await ls.service.compaction.preview_auto(session_id)
        plan = None
        if preview is not None:
            plan = (preview.summarized_message_ids, preview.kept_message_ids)
        by_id = {m.id: m for m in data.messages}
        text = usage_hover(data.usage, plan, by_id, reason)
        current = ls.service.drafts.state(session_id)
        if current is not None:
            text += "\n\n" + draft_hover(*current)
        width = rendered.usage_line_width
        return _hover(ls, text, Section("", USAGE_LINE, USAGE_LINE, width))
    section = rendered.section_at(line)
    if section is None or not held_as_rendered(ls, session_id, rendered):
        return None  # a line of the client's older copy names no message here
    message = next((m for m in data.messages if m.id == section.message_id), None)
    if message is None:  # the line belongs to a rendering the view has since left
        return None
    return _hover(ls, message_hover(message, data.usage), section)


def _hover(ls: BatonServer, text: str, section: Section) -> types.Hover:
    return types.Hover(
        contents=_markup(ls, text),
        range=types.Range(
            start=types.Position(line=section.start_line, character=0),
            end=types.Position(line=section.end_line, character=section.end_character),
        ),
    )


def _markup(ls: BatonServer, text: str) -> types.MarkupContent:
    """`text` (Markdown) as the client reads hovers: plain text, its bold and code marks
    taken out, for a client whose `hover.contentFormat` lists no `markdown` (Emacs's eglot
    without markdown-mode would show them as they are)."""
    caps = getattr(ls.protocol, "client_capabilities", None)  # none before initialize
    hover = getattr(getattr(caps, "text_document", None), "hover", None)
    formats = [str(getattr(f, "value", f)) for f in getattr(hover, "content_format", None) or []]
    if not formats or types.MarkupKind.Markdown.value in formats:
        return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
    return types.MarkupContent(kind=types.MarkupKind.PlainText, value=_MARKS.sub("", text))


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
    # off or paused, auto-compact runs at no point: the headline says which
    runs = usage.auto_compact_enabled and not usage.auto_compact_paused
    auto = f"auto-compact at {usage.auto_compact_threshold:,}, " if runs else ""
    lines.append(
        f"Used {usage.used_tokens:,} of {usage.effective_window:,} usable tokens{estimated}; "
        f"warning at {usage.warning_threshold:,}, {auto}blocked at {usage.blocking_limit:,}."
    )
    lines.append("")
    lines.append(usage.text.basis)
    lines.append("")
    lines.append(breakdown_line(usage))
    lines.append("")
    who = "Auto-compact" if runs else "A compaction"
    if plan is None and reason:
        lines.append(f"{who} cannot plan right now: {reason}.")
        return "\n".join(lines)
    if plan is None:
        lines.append(f"{who} would have nothing to summarize now.")
        return "\n".join(lines)
    summarized, kept = plan
    summarized_tokens = sum(messages[m].tokens for m in summarized if m in messages)
    kept_tokens = sum(messages[m].tokens for m in kept if m in messages)
    lines.append(
        f"{who} now would summarize {_count(len(summarized))} "
        f"({summarized_tokens:,} tokens) and keep the latest {_count(len(kept))} "
        f"({kept_tokens:,} tokens) verbatim."
    )
    return "\n".join(lines)


def draft_hover(draft: CompactDraft, stale: str | None) -> str:
    """The session's compaction draft: its sizes, what it costs and saves, what it drops,
    and why it is `stale` (as an apply would refuse it) when it is."""
    state = "" if stale is None else f" (stale: {stale}; preview again)"
    lines = [
        f"**Compaction draft** `{draft.draft_id}`{state}: {draft.direction}, "
        f"{draft.summarizer} summary; {draft.pre_tokens:,} -> {draft.post_tokens:,} tokens.",
        "",
        draft.cost.text,
    ]
    if draft.dropped is not None and draft.dropped.text:
        lines += ["", f"It drops: {draft.dropped.text}."]
    return "\n".join(lines)


def breakdown_line(usage: Usage) -> str:
    """The used tokens by category (those that hold any), then what is free."""
    parts = usage.breakdown.model_dump()
    labels = usage.text.labels
    used = [
        f"{_lower_first(labels.get(key, key))} {tokens:,}"
        for key, tokens in parts.items()
        if key != "free" and tokens > 0
    ]
    return f"By category: {' · '.join(used) or 'nothing yet'}; free {usage.breakdown.free:,}."


def _lower_first(label: str) -> str:
    """A label as it reads mid-sentence ("Messages" -> "messages")."""
    return label[:1].lower() + label[1:]


def _count(n: int) -> str:
    return f"{n} message{'s' if n != 1 else ''}"
