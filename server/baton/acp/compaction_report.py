"""A compaction as the client sees it: the Session Compaction RFD's `compaction_update`
(in progress, then completed, failed or cancelled) and `compaction_summary_chunk` when the
client declared `session.compaction`, else a short agent message.

The SDK does not know those two updates yet, so they go out raw, in the RFD's shape:

    {"sessionUpdate": "compaction_update", "compactionId", "status", "error"?}
    {"sessionUpdate": "compaction_summary_chunk", "compactionId", "content": ContentBlock}
"""

from __future__ import annotations

from typing import Literal

from acp.schema import AgentMessageChunk, AgentThoughtChunk, TextContentBlock

from baton.acp.outbox import Outbox
from baton.core.compaction.result import CompactResult
from baton.core.conversation.messages import CompactionBlock, Message, new_id
from baton.core.conversation.session import Session
from baton.core.usage.budget import Usage

Status = Literal["in_progress", "completed", "failed", "cancelled"]
SUMMARY_CHUNK_CHARS = 2_000


def summary_text(message: Message) -> str:
    """A summary message's text; the API's own compaction block's is its `content` (its
    `encrypted_content` alone has none to show)."""
    text = message.text()
    if text:
        return text
    blocks = [b for b in message.content if isinstance(b, CompactionBlock)]
    written = "\n".join(b.content for b in blocks if b.content)
    if written:
        return written
    if blocks:
        return "(the API's own compaction: its summary is not readable)"
    return ""


def boundary_summary(session: Session, boundary_id: str) -> str:
    """The text of the summary message a boundary placed, if it is in the view."""
    for message_id in session.view:
        message = session.messages[message_id]
        if message.kind == "summary" and message.boundary_id == boundary_id:
            return summary_text(message)
    return ""


def agent_text(outbox: Outbox, session_id: str, text: str, message_id: str | None = None) -> None:
    chunk = AgentMessageChunk(
        session_update="agent_message_chunk",
        content=TextContentBlock(type="text", text=text),
        message_id=message_id or new_id(),
    )
    outbox.update(session_id, chunk)


def agent_wait(outbox: Outbox, session_id: str, text: str) -> None:
    """A wait before the API is asked again (a rate limit, an overload), told as a thought:
    the client shows it while the turn or the compaction runs, and no reply holds it."""
    wait = AgentThoughtChunk(
        session_update="agent_thought_chunk", content=TextContentBlock(type="text", text=text)
    )
    outbox.update(session_id, wait)


def done_sentence(result: CompactResult) -> str:
    count = len(result.summarized_message_ids)
    noun = "message" if count == 1 else "messages"
    restored = len(result.restored_files)
    files = f"; {restored} file{'s' if restored != 1 else ''} restored" if restored else ""
    return (
        f"Compacted {count} {noun}: {result.pre_tokens:,} -> {result.post_tokens:,} tokens "
        f"(estimated){files}. /undo-compact puts them back."
    )


def undone_sentence(before: int, usage: Usage, what: str = "the latest compaction") -> str:
    """`/undo-compact`'s answer: what it undid, the context before and after it,
    "(estimated)" when the figure after is (an undo can leave a later reply's usage stale),
    as the meter's "~"."""
    rough = " (estimated)" if usage.estimated else ""
    return f"Undid {what}: {before:,} -> {usage.used_tokens:,} tokens{rough}."


class CompactionReport:
    """One compaction's updates, from `start` to exactly one of its ends."""

    def __init__(self, outbox: Outbox, session_id: str, entity: bool, compaction_id: str = ""):
        self.outbox = outbox
        self.session_id = session_id
        self.entity = entity  # the client declared session.compaction
        self.compaction_id = compaction_id or f"compaction-{new_id()}"

    def _update(self, status: Status, error: str | None = None) -> None:
        body: dict[str, object] = {
            "sessionUpdate": "compaction_update",
            "compactionId": self.compaction_id,
            "status": status,
        }
        if error is not None:
            body["error"] = error
        self.outbox.raw(self.session_id, body)

    def start(self) -> None:
        if self.entity:
            self._update("in_progress")

    def summary(self, text: str) -> None:
        if not self.entity or not text:
            return
        for start in range(0, len(text), SUMMARY_CHUNK_CHARS):
            piece = text[start : start + SUMMARY_CHUNK_CHARS]
            self.outbox.raw(
                self.session_id,
                {
                    "sessionUpdate": "compaction_summary_chunk",
                    "compactionId": self.compaction_id,
                    "content": {"type": "text", "text": piece},
                },
            )

    def completed(self, summary: str, sentence: str) -> None:
        if self.entity:
            self.summary(summary)
            self._update("completed")
        else:
            agent_text(self.outbox, self.session_id, sentence)

    def failed(self, error: str) -> None:
        if self.entity:
            self._update("failed", error)
        else:
            agent_text(self.outbox, self.session_id, f"Compaction failed: {error}")

    def cancelled(self) -> None:
        if self.entity:
            self._update("cancelled")
        else:
            agent_text(self.outbox, self.session_id, "Compaction cancelled.")

    def undone(self) -> None:
        """The entity the client holds, committed, is no longer in force (`/undo-compact`):
        updated in place as cancelled; without the entity, the command's answer says it."""
        if self.entity:
            self._update("cancelled")
