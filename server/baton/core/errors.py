"""Domain errors, each with the stable code that PROTOCOL.md puts in `data.code` (the wire
table, `contract/names.ERROR_TABLE`, lists the same codes: `tests/unit/test_error_codes.py`)."""

from __future__ import annotations

from typing import Any


class BatonError(Exception):
    """A failure the client should see; the request that raised it changed nothing."""

    code = "internal_error"

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class SessionNotFound(BatonError):
    code = "session_not_found"


class MessageNotFound(BatonError):
    code = "message_not_found"


class InvalidParams(BatonError):
    code = "invalid_params"


class NothingToCompact(BatonError):
    code = "nothing_to_compact"


class CompactionInProgress(BatonError):
    code = "compaction_in_progress"


class CompactionBlocked(BatonError):
    code = "compaction_blocked"


class DraftNotFound(BatonError):
    code = "draft_not_found"


class DraftStale(BatonError):
    code = "draft_stale"


class SummarizerFailed(BatonError):
    code = "summarizer_failed"


class PromptTooLong(BatonError):
    code = "prompt_too_long"

    def __init__(
        self, message: str, actual: int | None = None, limit: int | None = None, **data: Any
    ) -> None:
        super().__init__(message, actual=actual, limit=limit, **data)
        self.actual = actual
        self.limit = limit


class SessionLocked(BatonError):
    code = "session_locked"


class StorageError(BatonError):
    """A file of the data dir that cannot be read or written (not a regular file, a
    read-only or full disk, no permission): the message names the path and the cause."""

    code = "storage_error"


class TranscriptChanged(BatonError):
    """Another program replaced, truncated or deleted a transcript Baton holds open:
    nothing was written, and the session was read again from the disk."""

    code = "transcript_changed"


class ApiKeyMissing(BatonError):
    code = "api_key_missing"


class ApiError(BatonError):
    code = "api_error"


class TranscriptError(BatonError):
    """A transcript file that cannot be read at all (not a torn last line)."""

    code = "invalid_params"
