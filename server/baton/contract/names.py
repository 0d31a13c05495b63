"""The wire contract's names: methods, commands, notification directions and error codes.

What the server registers and advertises while it answers `initialize`, before any model is
imported. protocol.py pairs each name with its models and re-exports everything here, so
`protocol.X` stays the one place a client reads; it checks that its tables name exactly
these methods and commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The contract's version: raised whenever a client built against this contract could not
# work with a server built before the change (a new method, field or setting it relies on).
# The server advertises it in `initialize`'s capabilities.experimental.baton.contractVersion;
# the VS Code extension reads its own copy from protocol.ts and refuses an older server.
CONTRACT_VERSION = 2  # 2: baton/models, baton/session/rename, a session's size and source,
# baton/session/replaced, a view's task list

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
SESSION_SET_MODEL = "baton/session/setModel"
SESSION_REWIND = "baton/session/rewind"
SESSION_RENAME = "baton/session/rename"
MODELS = "baton/models"
USAGE = "baton/usage"
COMPACT = "baton/compact"
UNCOMPACT = "baton/uncompact"
COMPACT_PREVIEW = "baton/compact/preview"
COMPACT_APPLY_DRAFT = "baton/compact/applyDraft"
COMPACT_DISCARD_DRAFT = "baton/compact/discardDraft"
SESSION_REPLACED = "baton/session/replaced"

# ---- notifications -----------------------------------------------------------------------
USAGE_CHANGED = "baton/usageChanged"  # server -> client
SESSION_CHANGED = "baton/sessionChanged"  # server -> client
SESSION_DELTA = "baton/session/delta"  # server -> client
AUTO_COMPACT = "baton/autoCompact"  # server -> client
ACTIVE_EDITOR = "baton/activeEditor"  # client -> server
TOOL_PERMISSION = "baton/tool/permission"  # a request the server sends the client
TOOL_PERMISSION_CAPABILITY = "toolPermission"  # capabilities.experimental.baton.<this>

# ---- commands (workspace/executeCommand, one argument object) ----------------------------
CMD_COMPACT = "baton.compact"
CMD_COMPACT_UP_TO = "baton.compactUpTo"
CMD_COMPACT_FROM = "baton.compactFrom"
CMD_PREVIEW_COMPACT = "baton.previewCompact"
CMD_COMPACT_RANGE = "baton.compactRange"
CMD_UNCOMPACT = "baton.uncompact"

SETTINGS_SECTION = "baton"

# in protocol.py's table order (the commands in the order `initialize` advertises them)
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
    SESSION_SET_MODEL,
    SESSION_REWIND,
    SESSION_RENAME,
    MODELS,
    USAGE,
    COMPACT,
    UNCOMPACT,
    COMPACT_PREVIEW,
    COMPACT_APPLY_DRAFT,
    COMPACT_DISCARD_DRAFT,
    SESSION_REPLACED,
)
NOTIFICATIONS = (USAGE_CHANGED, SESSION_CHANGED, SESSION_DELTA, AUTO_COMPACT, ACTIVE_EDITOR)
CLIENT_NOTIFICATIONS = (ACTIVE_EDITOR,)
SERVER_REQUESTS = (TOOL_PERMISSION,)
COMMANDS = (
    CMD_COMPACT,
    CMD_COMPACT_UP_TO,
    CMD_COMPACT_FROM,
    CMD_PREVIEW_COMPACT,
    CMD_COMPACT_RANGE,
    CMD_UNCOMPACT,
)


@dataclass(frozen=True)
class ErrorCode:
    code: str  # `data.code` of the JSON-RPC error
    rpc_code: int  # the JSON-RPC `code`
    meaning: str


INVALID_PARAMS_RPC = -32602
INTERNAL_ERROR_RPC = -32603
REQUEST_FAILED_RPC = -32803

# Every code but one is a domain error's (`core/errors.py`, `tests/unit/test_error_codes.py`
# ties the two); the transport answers this one itself, before any domain code runs.
UNAUTHORIZED = "unauthorized"
EDGE_CODES = (UNAUTHORIZED,)

ERROR_TABLE: tuple[ErrorCode, ...] = (
    ErrorCode("session_not_found", REQUEST_FAILED_RPC, "no session with that id"),
    ErrorCode("message_not_found", REQUEST_FAILED_RPC, "no such message in the session's view"),
    ErrorCode("invalid_params", INVALID_PARAMS_RPC, "params that break the contract"),
    ErrorCode("nothing_to_compact", REQUEST_FAILED_RPC, "the compaction would change nothing"),
    ErrorCode("compaction_in_progress", REQUEST_FAILED_RPC, "the session is compacting"),
    ErrorCode("compaction_blocked", REQUEST_FAILED_RPC, "a PreCompact hook blocked it"),
    ErrorCode("draft_not_found", REQUEST_FAILED_RPC, "no such compaction draft"),
    ErrorCode("draft_stale", REQUEST_FAILED_RPC, "the session changed since the draft was made"),
    ErrorCode("summarizer_failed", REQUEST_FAILED_RPC, "the summary could not be written"),
    ErrorCode("prompt_too_long", REQUEST_FAILED_RPC, "past the blocking limit"),
    ErrorCode("session_locked", REQUEST_FAILED_RPC, "another process holds the session"),
    ErrorCode("storage_error", REQUEST_FAILED_RPC, "a data dir file cannot be read or written"),
    ErrorCode("transcript_changed", REQUEST_FAILED_RPC, "another program changed the transcript"),
    ErrorCode("api_key_missing", REQUEST_FAILED_RPC, "the request needs an API key"),
    ErrorCode("api_error", REQUEST_FAILED_RPC, "the model API failed or timed out"),
    ErrorCode("internal_error", INTERNAL_ERROR_RPC, "a server fault (never with a traceback)"),
    ErrorCode(UNAUTHORIZED, REQUEST_FAILED_RPC, "a network client without the server's token"),
)
ERROR_CODES = tuple(e.code for e in ERROR_TABLE)
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
