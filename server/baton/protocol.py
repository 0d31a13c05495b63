"""The wire contract: custom method names and their camelCase payloads (docs/PROTOCOL.md)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field

from baton.core.budget import Usage
from baton.core.messages import ContentBlock, Message, MessageInput, WireModel

# ---- requests (client -> server) ---------------------------------------------------------
SESSION_CREATE = "baton/session/create"
SESSION_LIST = "baton/session/list"
SESSION_GET = "baton/session/get"
SESSION_DELETE = "baton/session/delete"
SESSION_APPEND = "baton/session/append"
SESSION_SEND = "baton/session/send"
SESSION_RENDER = "baton/session/render"
SESSION_IMPORT = "baton/session/import"
SESSION_PIN = "baton/session/pin"
USAGE = "baton/usage"
COMPACT = "baton/compact"
UNCOMPACT = "baton/uncompact"

# ---- notifications -----------------------------------------------------------------------
USAGE_CHANGED = "baton/usageChanged"  # server -> client
SESSION_CHANGED = "baton/sessionChanged"  # server -> client
SESSION_DELTA = "baton/session/delta"  # server -> client
ACTIVE_EDITOR = "baton/activeEditor"  # client -> server

# ---- commands (workspace/executeCommand, one argument object) ----------------------------
CMD_COMPACT = "baton.compact"
CMD_COMPACT_UP_TO = "baton.compactUpTo"
CMD_COMPACT_FROM = "baton.compactFrom"
CMD_PREVIEW_COMPACT = "baton.previewCompact"
CMD_COMPACT_RANGE = "baton.compactRange"
CMD_UNCOMPACT = "baton.uncompact"

REQUESTS = (
    SESSION_CREATE,
    SESSION_LIST,
    SESSION_GET,
    SESSION_DELETE,
    SESSION_APPEND,
    SESSION_SEND,
    SESSION_RENDER,
    SESSION_IMPORT,
    SESSION_PIN,
    USAGE,
    COMPACT,
    UNCOMPACT,
)
NOTIFICATIONS = (USAGE_CHANGED, SESSION_CHANGED, SESSION_DELTA, ACTIVE_EDITOR)
COMMANDS = (
    CMD_COMPACT,
    CMD_COMPACT_UP_TO,
    CMD_COMPACT_FROM,
    CMD_PREVIEW_COMPACT,
    CMD_COMPACT_RANGE,
    CMD_UNCOMPACT,
)
ERROR_CODES = (
    "session_not_found",
    "message_not_found",
    "invalid_params",
    "nothing_to_compact",
    "compaction_in_progress",
    "summarizer_failed",
    "prompt_too_long",
    "session_locked",
    "api_key_missing",
    "api_error",
)

# ---- session documents -------------------------------------------------------------------
SESSION_SCHEME = "baton"
_SESSION_URI = re.compile(r"^baton:(?://)?/sessions/([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.md$")


def session_uri(session_id: str) -> str:
    return f"{SESSION_SCHEME}:/sessions/{session_id}.md"


def session_id_from_uri(uri: str) -> str | None:
    """The session a `baton:/sessions/<id>.md` URI names, or None for any other URI."""
    match = _SESSION_URI.match(uri)
    return match.group(1) if match else None


# ---- payloads ----------------------------------------------------------------------------


class Params(WireModel):
    """Request parameters: unknown keys are ignored, wrong types are `invalid_params`."""

    model_config = ConfigDict(extra="ignore", strict=False)


class NoParams(Params):
    pass


class CreateParams(Params):
    title: str | None = None
    system_prompt: str | None = None
    model: str | None = None


class SessionParams(Params):
    session_id: str


class AppendParams(SessionParams):
    messages: list[MessageInput] = Field(min_length=1)


class SendParams(SessionParams):
    content: str | list[ContentBlock] | None = None
    tools: list[dict[str, Any]] | None = None


class ImportParams(Params):
    path: str
    format: Literal["claude-code"] = "claude-code"
    title: str | None = None


Direction = Literal["all", "up_to", "from", "range"]


class CompactParams(SessionParams):
    direction: Direction = "all"
    pivot_message_id: str | None = None
    end_message_id: str | None = None
    instructions: str | None = None
    dry_run: bool = False


class UncompactParams(SessionParams):
    boundary_id: str | None = None


class PinParams(SessionParams):
    message_id: str
    pinned: bool


class ActiveEditorParams(Params):
    uri: str | None = None


class CompactCommandArgs(SessionParams):
    direction: Direction = "all"
    pivot_message_id: str | None = None
    end_message_id: str | None = None
    instructions: str | None = None


class PivotCommandArgs(SessionParams):
    message_id: str
    instructions: str | None = None


class PreviewCommandArgs(SessionParams):
    direction: Direction = "all"
    pivot_message_id: str | None = None
    end_message_id: str | None = None


class RangeCommandArgs(SessionParams):
    message_id: str
    end_message_id: str
    instructions: str | None = None


# ---- results -----------------------------------------------------------------------------


class SessionInfo(WireModel):
    session_id: str
    title: str
    model: str
    created_at: str
    updated_at: str
    uri: str
    compactions: int
    read_only: bool = False


class SessionList(WireModel):
    sessions: list[SessionInfo]


class SessionView(WireModel):
    session: SessionInfo
    messages: list[Message]
    usage: Usage


class AppendResult(WireModel):
    message_ids: list[str]
    usage: Usage
    repairs: list[str]


class SendResult(WireModel):
    message: Message
    usage: Usage


class UncompactResult(WireModel):
    usage: Usage


class Empty(WireModel):
    pass


class Position(WireModel):
    line: int
    character: int


class Range(WireModel):
    start: Position
    end: Position


class MessageRange(WireModel):
    message_id: str
    range: Range


class RenderResult(WireModel):
    uri: str
    text: str
    version: int
    messages: list[MessageRange]


# ---- notification payloads ---------------------------------------------------------------

ChangeReason = Literal["append", "reply", "compact", "uncompact", "delete", "pin", "create"]


class UsageChanged(WireModel):
    session_id: str
    usage: Usage


class SessionChanged(WireModel):
    session_id: str
    reason: ChangeReason


class SessionDelta(WireModel):
    session_id: str
    message_id: str
    text: str
