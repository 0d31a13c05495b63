"""A compaction draft as the wire and its record carry it (`CompactDraft`), and that record
beside the transcript (`draft_file.py`): what it holds (the draft, the request it was made
for, the session's fingerprint, the API's block), in which format, written, read back by
its id, whether it can still be applied (or why not), and discarded."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from baton.core.compaction.cost import DraftCost
from baton.core.compaction.draft_file import draft_path, saved_record, unchanged
from baton.core.compaction.dropped import Dropped
from baton.core.compaction.prepared_summary import PreparedSummary
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.boundary import (
    AdjustedPivot,
    BoundaryDirection,
    RestoredFile,
    Retention,
    SkippedFile,
)
from baton.core.conversation.files import storage_error
from baton.core.conversation.folders import replace_beside
from baton.core.conversation.messages import now_iso
from baton.core.conversation.session import Session
from baton.core.conversation.wire_model import WireModel
from baton.core.errors import DraftNotFound

RECORD_VERSION = 2  # 2: the fingerprint counts the transcript's events (1: its bytes)
# a record of an earlier format is shown, regenerated and discarded, never applied (stale)
EARLIER_VERSIONS = frozenset({1})
# why a saved draft can no longer be applied, as an apply and the hover say it
EARLIER_FORMAT = (
    "saved by an earlier version of Baton, whose record of the session this one cannot check"
)
CHANGED = "the session changed since"


class CompactDraft(WireModel):
    """A compaction written and measured but not committed: `summary` is the text the
    summarizer wrote (the fact ledger, `ledger`, is appended at the commit), the sizes are
    the ones the commit reports."""

    draft_id: str
    session_id: str
    direction: BoundaryDirection
    summary: str
    ledger: str | None = None
    summarizer: str
    instructions: str | None = None
    summarized_message_ids: list[str] = Field(default_factory=list)
    kept_message_ids: list[str] = Field(default_factory=list)
    pinned_message_ids: list[str] = Field(default_factory=list)
    restored_files: list[RestoredFile] = Field(default_factory=list)
    skipped_files: list[SkippedFile] = Field(default_factory=list)
    pre_tokens: int = 0
    post_tokens: int = 0
    retention: Retention | None = None
    adjusted_pivot: AdjustedPivot | None = None
    dropped: Dropped | None = None
    cost: DraftCost
    warnings: list[str] = Field(default_factory=list)
    created_at: str = Field(default_factory=now_iso)


def save_record(
    session: Session, draft: CompactDraft, prepared: PreparedSummary, print_: dict[str, Any]
) -> None:
    request = prepared.request
    record = {
        "version": RECORD_VERSION,
        "draft": draft.wire(),
        "request": {
            "direction": request.direction,
            "pivotMessageId": request.pivot_message_id,
            "endMessageId": request.end_message_id,
            "instructions": request.instructions,
            "trigger": request.trigger,
        },
        "fingerprint": print_,
        "block": prepared.block.model_dump(mode="json") if prepared.block else None,
    }
    path = draft_path(session)
    try:
        replace_beside(path, json.dumps(record, ensure_ascii=False).encode())
    except OSError as exc:
        raise storage_error("write the compaction draft", path, exc) from exc


def load_record(session: Session, draft_id: str) -> dict[str, Any]:
    """The session's draft record if it is `draft_id` (else `draft_not_found`)."""
    record = saved_record(session)
    versions = {RECORD_VERSION, *EARLIER_VERSIONS}
    if not isinstance(record, dict) or record.get("version") not in versions:
        raise DraftNotFound(f"session {session.session_id} has no draft {draft_id}")
    if (record.get("draft") or {}).get("draftId") != draft_id:
        raise DraftNotFound(f"session {session.session_id} has no draft {draft_id}")
    return record


def current_draft(session: Session) -> tuple[CompactDraft, bool] | None:
    """The session's saved draft, whatever its id, and whether it can still be applied
    (the session has not changed since); None when there is none."""
    found = draft_state(session)
    return None if found is None else (found[0], found[1] is None)


def draft_state(session: Session) -> tuple[CompactDraft, str | None] | None:
    """`current_draft` with why the draft can no longer be applied (`EARLIER_FORMAT`,
    `CHANGED`; None: it can), as an apply would refuse it."""
    record = saved_record(session)
    try:
        draft = CompactDraft.model_validate(record["draft"])
    except (ValueError, KeyError, TypeError):
        return None
    if record.get("version") != RECORD_VERSION:
        return draft, EARLIER_FORMAT
    return draft, None if unchanged(session, record.get("fingerprint")) else CHANGED


def discard(session: Session, draft_id: str) -> None:
    """Drop the draft's record; nothing else changes."""
    load_record(session, draft_id)
    path = draft_path(session)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise storage_error("remove the compaction draft", path, exc) from exc


def request_of(record: dict[str, Any], instructions: str | None = None) -> CompactRequest:
    """The compaction request a draft was made for (other instructions for a regenerate)."""
    asked = record["request"]
    return CompactRequest(
        direction=asked["direction"],
        pivot_message_id=asked.get("pivotMessageId"),
        end_message_id=asked.get("endMessageId"),
        instructions=instructions if instructions is not None else asked.get("instructions"),
        trigger=asked.get("trigger") or "manual",
    )
