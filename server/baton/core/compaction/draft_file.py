"""A compaction draft's record file, `<sessionId>.draft.json` beside the transcript: where
it is, the fingerprint of the session it was made on (and whether the session is still
as it was then), and its JSON read back bounded."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from baton.core.conversation.files import open_regular, read_small
from baton.core.conversation.session import Session
from baton.core.conversation.transcript_read import parse_line  # nested too deep: ValueError
from baton.core.errors import StorageError

RECORD_BYTES = 64 * 1024 * 1024  # a summary of 2,000,000 characters, escaped, and room
RENAMES_READ = 64 * 1024  # the most read back of what the transcript grew by since a draft
TITLE_FIELDS = {"type", "title", "at"}  # a rename's record (`SessionStore.rename`)


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


def unchanged(session: Session, then: Any) -> bool:
    """Whether the session is as it was at the fingerprint `then`: the same view, and every
    event of the transcript the same but for renames since (a title is nothing a
    compaction plans on): what it grew by is read back, when short, and must be `meta`
    records of a title alone."""
    now = fingerprint(session)
    if now == then:
        return True
    if not isinstance(then, dict) or then.get("view") != now["view"]:
        return False
    start, end = then.get("transcriptBytes"), now["transcriptBytes"]
    if not isinstance(start, int) or not 0 < start < end or end - start > RENAMES_READ:
        return False
    try:
        fd = open_regular(session.transcript.path, os.O_RDONLY)
        try:
            grown = os.pread(fd, end - start + 1, start - 1)
        finally:
            os.close(fd)
    except (OSError, StorageError):
        return False
    if len(grown) != end - start + 1 or not grown.startswith(b"\n") or not grown.endswith(b"\n"):
        return False
    return all(_renamed(line) for line in grown[1:-1].split(b"\n"))


def _renamed(line: bytes) -> bool:
    try:
        event = parse_line(line)
    except ValueError:
        return False
    return isinstance(event, dict) and event.get("type") == "meta" and event.keys() <= TITLE_FIELDS


def saved_record(session: Session) -> Any:
    """The JSON of the session's draft record; None when there is none, or it cannot be
    read: as good as none (a preview writes it again). Read only as a regular file of at
    most RECORD_BYTES: a link is never followed, a FIFO never waited on."""
    try:
        data = read_small(draft_path(session), RECORD_BYTES)
        return parse_line(data) if data is not None else None
    except (OSError, StorageError, ValueError):
        return None
