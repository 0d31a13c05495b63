"""A compaction draft's record file, `<sessionId>.draft.json` beside the transcript: where
it is, the fingerprint of the session it was made on (and whether the session is still
as it was then), and its JSON read back bounded."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from baton.core.conversation.files import read_small
from baton.core.conversation.session import Session
from baton.core.conversation.transcript_read import parse_line  # nested too deep: ValueError
from baton.core.errors import StorageError

RECORD_BYTES = 64 * 1024 * 1024  # a summary of 2,000,000 characters, escaped, and room


def draft_path(session: Session) -> Path:
    """`<sessionId>.draft.json` beside `<sessionId>.jsonl` (no listing reads that name)."""
    return draft_beside(Path(session.transcript.path))


def draft_beside(transcript: Path) -> Path:
    """The draft's place beside the transcript `transcript`, whether its session is open."""
    return transcript.with_name(f"{transcript.stem}.draft.json")


def fingerprint(session: Session) -> dict[str, Any]:
    """What must not change between a draft and its commit: the view, and every event of
    the transcript but renames (a pin, an undo, an append, a model switch each add one; a
    title is nothing a compaction plans on), counted as the session read and wrote them."""
    view = hashlib.sha256("\n".join(session.view).encode()).hexdigest()
    return {"view": view, "events": session.transcript.events_but_renames}


def unchanged(session: Session, then: Any) -> bool:
    """Whether the session is as it was at the fingerprint `then`, and the file it holds as
    it read and wrote it (another program may have written it since)."""
    transcript = session.transcript
    if not transcript.read_only and transcript.moved_on():
        return False
    return bool(then == fingerprint(session))


def saved_record(session: Session) -> Any:
    """The JSON of the session's draft record; None when there is none, or it cannot be
    read: as good as none (a preview writes it again). Read only as a regular file of at
    most RECORD_BYTES: a link is never followed, a FIFO never waited on."""
    try:
        data = read_small(draft_path(session), RECORD_BYTES)
        return parse_line(data) if data is not None else None
    except (OSError, StorageError, ValueError):
        return None
