"""What one compaction replaced, as it was: the messages a boundary summarized (or a rewind
took out, or microcompaction cleared), read from the session's transcript for a client
that shows them under the summary."""

from __future__ import annotations

from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.errors import InvalidParams


def replaced_messages(session: Session, boundary_id: str) -> list[Message]:
    """The messages boundary `boundary_id` replaced, in their order (whether it is still in
    force or was undone); one the transcript lost is left out. An unknown id is
    `invalid_params`."""
    boundary = session.boundaries.get(boundary_id)
    if boundary is None:
        raise InvalidParams(f"no compaction {boundary_id!r} in session {session.session_id}")
    return [session.messages[mid] for mid in boundary.summarized_ids if mid in session.messages]
