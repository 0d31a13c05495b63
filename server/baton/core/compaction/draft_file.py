"""A compaction draft's record file, `<sessionId>.draft.json` beside the transcript: where
it is, the fingerprint of the session it was made on, and its JSON read back bounded."""

from __future__ import annotations

import hashlib
import os
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
    the transcript (a pin, an undo, an append, a model switch all grow it)."""
    view = hashlib.sha256("\n".join(session.view).encode()).hexdigest()
    try:
        size = os.stat(session.transcript.path).st_size
    except OSError:
        size = -1
    return {"view": view, "transcriptBytes": size}


def saved_record(session: Session) -> Any:
    """The JSON of the session's draft record; None when there is none, or it cannot be
    read: as good as none (a preview writes it again). Read only as a regular file of at
    most RECORD_BYTES: a link is never followed, a FIFO never waited on."""
    try:
        data = read_small(draft_path(session), RECORD_BYTES)
        return parse_line(data) if data is not None else None
    except (OSError, StorageError, ValueError):
        return None
