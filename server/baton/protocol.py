"""The wire contract as one table: every request, notification, command and error code.

Each request pairs its method with a params and a result model, each notification its
method, direction and params model, each command its name, argument and result models.
The lsp layer dispatches from these tables and `python -m baton.contract` generates
docs/protocol.schema.json, client-vscode/src/protocol.ts and the settings block of
client-vscode/package.json from them. Core payload models are re-exported from where they
live. Serialization is `WireModel.wire()` (camelCase; null fields left out unless declared
required) for every answer, notification and `--json` output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from baton.core.boundary import DIRECTIONS, AdjustedPivot, Direction, RestoredFile, Retention
from baton.core.boundary import RetentionFigure as RetentionFigure
from baton.core.budget import Breakdown, Usage
from baton.core.compaction.result import CompactResult
from baton.core.messages import (
    ApiUsage,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    MessageInput,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WireModel,
)
from baton.core.settings import Settings
from baton.payloads import (
    ActiveEditorParams,
    AppendParams,
    AppendResult,
    ChangeReason,
    CompactCommandArgs,
    CompactParams,
    CreateParams,
    DamageInfo,
    Empty,
    ImportParams,
    MessageRange,
    NoParams,
    Params,
    PinParams,
    PivotCommandArgs,
    Position,
    PreviewCommandArgs,
    Range,
    RangeCommandArgs,
    RenderResult,
    SendParams,
    SendResult,
    SessionChanged,
    SessionDelta,
    SessionInfo,
    SessionList,
    SessionParams,
    SessionView,
    UncompactParams,
    UncompactResult,
    UsageChanged,
)

__all__ = [  # the re-exported models, so `protocol.X` is the one place a client reads
    "DIRECTIONS", "ActiveEditorParams", "AdjustedPivot", "ApiUsage", "AppendParams",
    "AppendResult", "Breakdown", "ChangeReason", "CompactCommandArgs", "CompactParams",
    "CompactResult", "ContentBlock", "CreateParams", "DamageInfo", "Direction", "DocumentBlock",
    "Empty", "ImageBlock", "ImportParams", "Message", "MessageInput", "MessageRange",
    "NoParams", "Params", "PinParams", "PivotCommandArgs", "Position", "PreviewCommandArgs",
    "Range", "RangeCommandArgs", "RedactedThinkingBlock", "RenderResult", "RestoredFile",
    "Retention", "RetentionFigure", "SendParams", "SendResult", "SessionChanged",
    "SessionDelta", "SessionInfo", "SessionList", "SessionParams", "SessionView", "Settings",
    "TextBlock", "ThinkingBlock", "ToolResultBlock", "ToolUseBlock", "UncompactParams",
    "UncompactResult", "Usage", "UsageChanged", "WireModel",
]  # fmt: skip

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

SETTINGS_SECTION = "baton"


@dataclass(frozen=True)
class Request:
    method: str
    params: type[BaseModel]
    result: type[BaseModel]
    progress: bool = False  # honours a workDoneToken


@dataclass(frozen=True)
class Notification:
    method: str
    params: type[BaseModel]
    sender: Literal["server", "client"]


@dataclass(frozen=True)
class Command:
    name: str
    argument: type[BaseModel]
    result: type[BaseModel]


@dataclass(frozen=True)
class ErrorCode:
    code: str  # `data.code` of the JSON-RPC error
    rpc_code: int  # the JSON-RPC `code`
    meaning: str


INVALID_PARAMS_RPC = -32602
INTERNAL_ERROR_RPC = -32603
REQUEST_FAILED_RPC = -32803

REQUEST_TABLE: tuple[Request, ...] = (
    Request(SESSION_CREATE, CreateParams, SessionInfo),
    Request(SESSION_LIST, NoParams, SessionList),
    Request(SESSION_GET, SessionParams, SessionView),
    Request(SESSION_DELETE, SessionParams, Empty),
    Request(SESSION_APPEND, AppendParams, AppendResult),
    Request(SESSION_SEND, SendParams, SendResult, progress=True),
    Request(SESSION_RENDER, SessionParams, RenderResult),
    Request(SESSION_IMPORT, ImportParams, SessionInfo),
    Request(SESSION_PIN, PinParams, Message),
    Request(USAGE, SessionParams, Usage),
    Request(COMPACT, CompactParams, CompactResult, progress=True),
    Request(UNCOMPACT, UncompactParams, UncompactResult),
)
NOTIFICATION_TABLE: tuple[Notification, ...] = (
    Notification(USAGE_CHANGED, UsageChanged, "server"),
    Notification(SESSION_CHANGED, SessionChanged, "server"),
    Notification(SESSION_DELTA, SessionDelta, "server"),
    Notification(ACTIVE_EDITOR, ActiveEditorParams, "client"),
)
COMMAND_TABLE: tuple[Command, ...] = (
    Command(CMD_COMPACT, CompactCommandArgs, CompactResult),
    Command(CMD_COMPACT_UP_TO, PivotCommandArgs, CompactResult),
    Command(CMD_COMPACT_FROM, PivotCommandArgs, CompactResult),
    Command(CMD_PREVIEW_COMPACT, PreviewCommandArgs, CompactResult),
    Command(CMD_COMPACT_RANGE, RangeCommandArgs, CompactResult),
    Command(CMD_UNCOMPACT, UncompactParams, UncompactResult),
)
ERROR_TABLE: tuple[ErrorCode, ...] = (
    ErrorCode("session_not_found", REQUEST_FAILED_RPC, "no session with that id"),
    ErrorCode("message_not_found", REQUEST_FAILED_RPC, "no such message in the session's view"),
    ErrorCode("invalid_params", INVALID_PARAMS_RPC, "params that break the contract"),
    ErrorCode("nothing_to_compact", REQUEST_FAILED_RPC, "the compaction would change nothing"),
    ErrorCode("compaction_in_progress", REQUEST_FAILED_RPC, "the session is compacting"),
    ErrorCode("summarizer_failed", REQUEST_FAILED_RPC, "the summary could not be written"),
    ErrorCode("prompt_too_long", REQUEST_FAILED_RPC, "past the blocking limit"),
    ErrorCode("session_locked", REQUEST_FAILED_RPC, "another process holds the session"),
    ErrorCode("api_key_missing", REQUEST_FAILED_RPC, "the request needs an API key"),
    ErrorCode("api_error", REQUEST_FAILED_RPC, "the model API failed or timed out"),
    ErrorCode("internal_error", INTERNAL_ERROR_RPC, "a server fault (never with a traceback)"),
    ErrorCode("unauthorized", REQUEST_FAILED_RPC, "a network client without the server's token"),
)

WIRE_NAMES: dict[type[BaseModel], str] = {SessionInfo: "Session"}
"""Models whose wire (schema, TypeScript) name differs from the Python class name."""

REQUESTS = tuple(r.method for r in REQUEST_TABLE)
NOTIFICATIONS = tuple(n.method for n in NOTIFICATION_TABLE)
COMMANDS = tuple(c.name for c in COMMAND_TABLE)
ERROR_CODES = tuple(e.code for e in ERROR_TABLE)
REQUEST_BY_METHOD = {r.method: r for r in REQUEST_TABLE}
COMMAND_BY_NAME = {c.name: c for c in COMMAND_TABLE}
RPC_CODE = {e.code: e.rpc_code for e in ERROR_TABLE}

# ---- session documents -------------------------------------------------------------------
SESSION_SCHEME = "baton"
_SESSION_URI = re.compile(r"^baton:(?://)?/sessions/([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.md$")


def session_uri(session_id: str) -> str:
    return f"{SESSION_SCHEME}:/sessions/{session_id}.md"


def session_id_from_uri(uri: str) -> str | None:
    """The session a `baton:/sessions/<id>.md` URI names, or None for any other URI."""
    match = _SESSION_URI.match(uri)
    return match.group(1) if match else None
