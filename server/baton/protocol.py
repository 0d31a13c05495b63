"""The wire contract as one table: every request, notification, command and error code.

Each request pairs its method with a params and a result model, each notification its
method, direction and params model, each command its name, argument and result models.
The lsp layer dispatches from these tables and `python -m baton.contract` generates
docs/protocol.schema.json, client-vscode/src/protocol.ts and the settings block of
client-vscode/package.json from them. Core payload models are re-exported from where they
live, and so are the names (protocol_names.py: what the server needs before any model).
Serialization is `WireModel.wire()` (camelCase; null fields left out unless declared
required) for every answer, notification and `--json` output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from baton.contract.answers import (
    AppendResult,
    DamageInfo,
    Empty,
    ImportedSession,
    MessageRange,
    ModelSwitch,
    Position,
    Range,
    RenderResult,
    ReplacedMessages,
    RewindResult,
    SendResult,
    SessionInfo,
    SessionList,
    SessionSource,
    SessionView,
    SetAside,
    TodoEntry,
    UncompactResult,
)
from baton.contract.names import (
    ACTIVE_EDITOR,
    AUTO_COMPACT,
    CLIENT_NOTIFICATIONS,
    CMD_COMPACT,
    CMD_COMPACT_FROM,
    CMD_COMPACT_RANGE,
    CMD_COMPACT_UP_TO,
    CMD_PREVIEW_COMPACT,
    CMD_UNCOMPACT,
    COMMANDS,
    COMPACT,
    COMPACT_APPLY_DRAFT,
    COMPACT_DISCARD_DRAFT,
    COMPACT_PREVIEW,
    CONTRACT_VERSION,
    EDGE_CODES,
    ERROR_CODES,
    ERROR_TABLE,
    INTERNAL_ERROR_RPC,
    INVALID_PARAMS_RPC,
    MODELS,
    NOTIFICATIONS,
    REQUEST_FAILED_RPC,
    REQUESTS,
    RPC_CODE,
    SERVER_REQUESTS,
    SESSION_APPEND,
    SESSION_CHANGED,
    SESSION_CREATE,
    SESSION_DELETE,
    SESSION_DELTA,
    SESSION_GET,
    SESSION_IMPORT,
    SESSION_LIST,
    SESSION_PIN,
    SESSION_RENAME,
    SESSION_RENDER,
    SESSION_REPLACED,
    SESSION_REWIND,
    SESSION_SCHEME,
    SESSION_SEND,
    SESSION_SET_MODEL,
    SETTINGS_SECTION,
    TOOL_PERMISSION,
    TOOL_PERMISSION_CAPABILITY,
    UNAUTHORIZED,
    UNCOMPACT,
    USAGE,
    USAGE_CHANGED,
    ErrorCode,
    session_id_from_uri,
    session_uri,
)
from baton.contract.params import (
    ActiveEditorParams,
    AppendParams,
    ApplyDraftParams,
    CompactCommandArgs,
    CompactParams,
    CreateParams,
    DraftParams,
    DraftPreviewParams,
    ImportParams,
    ModelsParams,
    NoParams,
    PageParams,
    Params,
    PinParams,
    PivotCommandArgs,
    PreviewCommandArgs,
    RangeCommandArgs,
    RenameParams,
    ReplacedParams,
    RewindParams,
    SendParams,
    SessionParams,
    SetModelParams,
    UncompactParams,
    UsageParams,
)
from baton.contract.server_sent import (
    AutoCompacted,
    ChangeReason,
    SessionChanged,
    SessionDelta,
    ToolPermissionOption,
    ToolPermissionParams,
    ToolPermissionResult,
    UsageChanged,
)
from baton.core.compaction.cost import DraftCost, ModelPrice
from baton.core.compaction.draft_record import CompactDraft
from baton.core.compaction.dropped import Dropped, DroppedFacts
from baton.core.compaction.result import CompactResult
from baton.core.conversation.boundary import (
    DIRECTIONS,
    AdjustedPivot,
    Direction,
    RestoredFile,
    Retention,
)
from baton.core.conversation.boundary import RetentionFigure as RetentionFigure
from baton.core.conversation.messages import (
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
)
from baton.core.conversation.wire_model import WireModel
from baton.core.service.model_catalog import ModelCatalog, ModelOption
from baton.core.settings import Settings
from baton.core.usage.budget import Breakdown, RequestSize, Usage
from baton.core.usage.draft import Draft, DraftInfo, DraftUsage
from baton.core.usage.overhead import ClientContext
from baton.core.usage.wording import UsageText

__all__ = [  # the re-exported models, so `protocol.X` is the one place a client reads
    "DIRECTIONS", "ActiveEditorParams", "AdjustedPivot", "ApiUsage", "AppendParams",
    "AppendResult", "Breakdown", "ChangeReason", "CompactCommandArgs", "CompactParams",
    "CompactResult", "ContentBlock", "CreateParams", "DamageInfo", "Direction", "DocumentBlock",
    "Empty", "ImageBlock", "ImportParams", "Message", "MessageInput", "MessageRange",
    "NoParams", "PageParams", "Params", "PinParams", "PivotCommandArgs", "Position",
    "PreviewCommandArgs", "Range", "RangeCommandArgs", "RedactedThinkingBlock", "RenderResult",
    "RestoredFile",
    "Retention", "RetentionFigure", "SendParams", "SendResult", "SessionChanged",
    "SessionDelta", "SessionInfo", "SessionList", "SessionParams", "SessionView", "Settings",
    "TextBlock", "ThinkingBlock", "ToolResultBlock", "ToolUseBlock", "UncompactParams",
    "UncompactResult", "Usage", "UsageChanged", "WireModel",
]  # fmt: skip
__all__ += ["AutoCompacted", "Draft", "DraftInfo", "DraftUsage", "ModelSwitch", "SetModelParams"]
__all__ += ["AUTO_COMPACT", "SESSION_SET_MODEL", "UsageParams"]
__all__ += ["SESSION_REWIND", "RewindParams", "RewindResult"]  # edit and resend, retry
__all__ += ["ImportedSession"]  # an import's answer: the session and its notes
__all__ += ["SetAside"]  # a send's own rewind: a refused reply, or a retried one
__all__ += ["ApplyDraftParams", "CompactDraft", "DraftCost", "DraftParams", "DraftPreviewParams"]
__all__ += ["COMPACT_APPLY_DRAFT", "COMPACT_DISCARD_DRAFT", "COMPACT_PREVIEW"]
__all__ += ["Dropped", "DroppedFacts", "ModelPrice"]  # compaction drafts and what went
__all__ += ["SESSION_REPLACED", "ReplacedMessages", "ReplacedParams", "TodoEntry"]
__all__ += ["CONTRACT_VERSION"]  # the contract's version (names.py), in initialize's answer
__all__ += ["SERVER_REQUESTS", "TOOL_PERMISSION", "TOOL_PERMISSION_CAPABILITY"]
__all__ += ["ToolPermissionOption", "ToolPermissionParams", "ToolPermissionResult"]
__all__ += ["MODELS", "ModelCatalog", "ModelOption", "ModelsParams"]  # the model picker
__all__ += ["SESSION_RENAME", "RenameParams", "SessionSource"]  # the session picker
__all__ += ["ClientContext", "UsageText"]  # usage: what a client declares, the usage in words
__all__ += ["RequestSize"]  # usage: the next request's bytes, near the API's 32 MB
__all__ += [  # the names (protocol_names.py), so every one is read from here too
    "ACTIVE_EDITOR", "CLIENT_NOTIFICATIONS", "CMD_COMPACT", "CMD_COMPACT_FROM",
    "CMD_COMPACT_RANGE", "CMD_COMPACT_UP_TO", "CMD_PREVIEW_COMPACT", "CMD_UNCOMPACT",
    "COMMANDS", "COMPACT", "EDGE_CODES", "ERROR_CODES", "ERROR_TABLE", "INTERNAL_ERROR_RPC",
    "INVALID_PARAMS_RPC", "NOTIFICATIONS", "REQUESTS", "REQUEST_FAILED_RPC", "RPC_CODE",
    "SESSION_APPEND", "SESSION_CHANGED", "SESSION_CREATE", "SESSION_DELETE", "SESSION_DELTA",
    "SESSION_GET", "SESSION_IMPORT", "SESSION_LIST", "SESSION_PIN", "SESSION_RENDER",
    "SESSION_SCHEME", "SESSION_SEND", "SETTINGS_SECTION", "UNAUTHORIZED", "UNCOMPACT", "USAGE",
    "USAGE_CHANGED",
    "ErrorCode", "session_id_from_uri", "session_uri",
]  # fmt: skip


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


REQUEST_TABLE: tuple[Request, ...] = (
    Request(SESSION_CREATE, CreateParams, SessionInfo),
    Request(SESSION_LIST, NoParams, SessionList),
    Request(SESSION_GET, PageParams, SessionView),
    Request(SESSION_DELETE, SessionParams, Empty),
    Request(SESSION_APPEND, AppendParams, AppendResult),
    Request(SESSION_SEND, SendParams, SendResult, progress=True),
    Request(SESSION_RENDER, PageParams, RenderResult),
    Request(SESSION_IMPORT, ImportParams, ImportedSession, progress=True),
    Request(SESSION_PIN, PinParams, Message),
    Request(SESSION_SET_MODEL, SetModelParams, ModelSwitch),
    Request(SESSION_REWIND, RewindParams, RewindResult),
    Request(SESSION_RENAME, RenameParams, SessionInfo),
    Request(MODELS, ModelsParams, ModelCatalog),
    Request(USAGE, UsageParams, DraftUsage),
    Request(COMPACT, CompactParams, CompactResult, progress=True),
    Request(UNCOMPACT, UncompactParams, UncompactResult, progress=True),
    Request(COMPACT_PREVIEW, DraftPreviewParams, CompactDraft, progress=True),
    Request(COMPACT_APPLY_DRAFT, ApplyDraftParams, CompactResult, progress=True),
    Request(COMPACT_DISCARD_DRAFT, DraftParams, Empty),
    Request(SESSION_REPLACED, ReplacedParams, ReplacedMessages),
)
SERVER_REQUEST_TABLE: tuple[Request, ...] = (  # requests the server sends, the client answers
    Request(TOOL_PERMISSION, ToolPermissionParams, ToolPermissionResult),
)
NOTIFICATION_TABLE: tuple[Notification, ...] = (
    Notification(USAGE_CHANGED, UsageChanged, "server"),
    Notification(SESSION_CHANGED, SessionChanged, "server"),
    Notification(SESSION_DELTA, SessionDelta, "server"),
    Notification(AUTO_COMPACT, AutoCompacted, "server"),
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

WIRE_NAMES: dict[type[BaseModel], str] = {SessionInfo: "Session"}
"""Models whose wire (schema, TypeScript) name differs from the Python class name."""

REQUEST_BY_METHOD = {r.method: r for r in REQUEST_TABLE}
COMMAND_BY_NAME = {c.name: c for c in COMMAND_TABLE}


def _names_match() -> None:
    """The tables name exactly the methods and commands protocol_names.py lists (what the
    server registers and advertises before this module is imported), in the same order."""
    pairs = (
        ("requests", REQUESTS, tuple(r.method for r in REQUEST_TABLE)),
        ("notifications", NOTIFICATIONS, tuple(n.method for n in NOTIFICATION_TABLE)),
        (
            "client notifications",
            CLIENT_NOTIFICATIONS,
            tuple(n.method for n in NOTIFICATION_TABLE if n.sender == "client"),
        ),
        ("commands", COMMANDS, tuple(c.name for c in COMMAND_TABLE)),
        ("server requests", SERVER_REQUESTS, tuple(r.method for r in SERVER_REQUEST_TABLE)),
    )
    for kind, names, table in pairs:
        if names != table:
            raise RuntimeError(f"protocol_names.py lists other {kind} than the table: {names}")


_names_match()
