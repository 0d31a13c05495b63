"""Microcompact: after an idle gap, clear the content of old results of bulky tools."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from baton.core.compaction.retention.facts import result_text
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    CLEARED_RESULT,
    ContentBlock,
    Message,
    ToolResultBlock,
    new_id,
)
from baton.core.conversation.session import Session
from baton.core.settings import MicrocompactSettings

CLEARED = CLEARED_RESULT


def _parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def idle_since(view: list[Message]) -> datetime | None:
    """When the model last answered (the newest assistant message's time), if ever."""
    for message in reversed(view):
        if message.role == "assistant":
            return _parse_time(message.created_at)
    return None


def _clearable(block: ToolResultBlock) -> bool:
    """Worth clearing: not an error (errors are short and say what went wrong) and bigger
    than the placeholder (images and documents always are)."""
    if block.is_error or not block.content:
        return False
    if isinstance(block.content, list) and any(p.get("type") != "text" for p in block.content):
        return True
    return len(result_text(block)) > len(CLEARED)


def microcompact(
    session: Session, settings: MicrocompactSettings, *, now: datetime | None = None
) -> Boundary | None:
    """Clear old bulky tool results once the prompt cache is surely cold; None when nothing
    qualifies (no idle gap yet, nothing old enough, a compaction running, a read-only view,
    or a microcompaction undone since the last reply: the user asked for its results back,
    and the next request sends them).

    The most recent `keep_recent` results of those tools stay. Each changed message is
    replaced by a copy under a new id, so the change is one boundary and can be undone.
    Pinned messages are never changed.
    """
    if session.compacting or session.read_only or session.microcompact_undone:
        return None
    view = session.view_messages()
    last_reply = idle_since(view)
    moment = now or datetime.now(UTC)
    if last_reply is None or moment - last_reply < timedelta(minutes=settings.gap_minutes):
        return None
    bulky = set(settings.tools)
    tool_names = {use.id: use.name for m in view for use in m.tool_uses()}
    results = [
        (message.id, block.tool_use_id)
        for message in view
        if message.role == "user" and not message.pinned
        for block in message.tool_results()
        if tool_names.get(block.tool_use_id) in bulky and not block.is_error
    ]
    keep = max(0, len(results) - settings.keep_recent)
    old = {use_id for _, use_id in results[:keep]}
    copies: dict[str, Message] = {}
    cleared = 0
    for message in view:
        if message.role != "user" or message.pinned:
            continue
        targets = [b for b in message.tool_results() if b.tool_use_id in old and _clearable(b)]
        if targets:
            cleared += len(targets)
            copies[message.id] = _cleared_copy(message, {b.tool_use_id for b in targets})
    if not copies:
        return None
    boundary = Boundary(
        trigger="auto",
        direction="microcompact",
        summarizer="microcompact",
        pre_tokens=sum(m.tokens for m in view),
        new_messages=list(copies.values()),
        stands_for={copy.id: [original] for original, copy in copies.items()},
        summarized_ids=list(copies),
        kept_ids=[m.id for m in view if m.id not in copies],
        view_before=[m.id for m in view],
        view_after=[copies[m.id].id if m.id in copies else m.id for m in view],
        extra={"clearedResults": cleared},
    )
    for copy in boundary.new_messages:
        copy.tokens = session.count(copy)
    boundary.post_tokens = sum(copies[m.id].tokens if m.id in copies else m.tokens for m in view)
    session.commit_boundary(boundary)
    return boundary


def _cleared_copy(message: Message, use_ids: set[str]) -> Message:
    content: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock) and block.tool_use_id in use_ids:
            block = ToolResultBlock(tool_use_id=block.tool_use_id, content=CLEARED)
        content.append(block)
    return message.model_copy(update={"id": new_id(), "content": content, "tokens": 0})
