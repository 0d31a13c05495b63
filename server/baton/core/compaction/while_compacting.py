"""What a session refuses while it compacts (`compaction_in_progress`): a rewind, a pin, an
undo; each made at once otherwise. `engine` offers them with the compaction itself."""

from __future__ import annotations

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.errors import CompactionInProgress


def rewind(session: Session, message_id: str) -> Boundary:
    """Cut the view before `message_id` (edit a prompt, retry a reply); not while it compacts."""
    if session.compacting:
        raise CompactionInProgress(f"session {session.session_id} is being compacted")
    return session.rewind(message_id)


def pin(session: Session, message_id: str, pinned: bool) -> Message:
    """Pin or unpin a message. Not a pin while the session compacts: the compaction planned
    from the pins it found and would summarize the message all the same (an unpin is
    harmless: the message stays verbatim this once)."""
    if pinned and session.compacting:
        raise CompactionInProgress(
            f"session {session.session_id} is being compacted: pin the message once it ends"
        )
    return session.set_pinned(message_id, pinned)


def undo_target(session: Session, boundary_id: str | None = None) -> str:
    """The boundary `uncompact` would undo, refused as it refuses before its check."""
    if session.compacting:
        raise CompactionInProgress(f"session {session.session_id} is being compacted")
    return session.undo_target(boundary_id)


def uncompact(session: Session, boundary_id: str | None = None) -> Boundary:
    """Undo one compaction (default: the latest), keeping every turn made after it."""
    return session.uncompact(undo_target(session, boundary_id))
