"""What the server sends unasked: notification payloads and the requests a client answers.

protocol.py pairs them with their methods and senders; they exist only for the wire.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from baton.core.compaction.dropped import Dropped
from baton.core.conversation.wire_model import WireModel
from baton.core.usage.budget import Usage

# ---- notification payloads ---------------------------------------------------------------

ChangeReason = Literal[
    "append",
    "reply",
    "compact",
    "uncompact",
    "delete",
    "pin",
    "create",
    "model",
    "rewind",
    "rename",
    "reload",
    "systemPrompt",
]


class UsageChanged(WireModel):
    session_id: str
    usage: Usage


class SessionChanged(WireModel):
    session_id: str
    reason: ChangeReason


class AutoCompacted(WireModel):
    """What an auto-compaction did: `compacted` (the context went from `tokensBefore` to
    `tokensAfter`) or `failed` (nothing changed, or not enough; the request goes out
    anyway); `message` says it in one sentence."""

    session_id: str
    outcome: Literal["compacted", "failed"]
    tokens_before: int
    tokens_after: int
    message: str
    dropped: Dropped | None = Field(
        default=None, description="what a compaction summarized, cleared and left out"
    )


class SessionDelta(WireModel):
    session_id: str
    message_id: str
    text: str


# ---- requests the server sends ------------------------------------------------------------

PermissionOutcome = Literal["allowOnce", "allowSession", "deny"]


class ToolPermissionOption(WireModel):
    id: PermissionOutcome
    label: str


class ToolPermissionParams(WireModel):
    """`baton/tool/permission`: a workspace tool call whose level is `ask` waits for the
    user's answer. `title` is the call in one line, `diff` an edit's unified diff."""

    session_id: str
    tool_use_id: str
    tool: str
    input: dict[str, Any]
    title: str
    kind: Literal["read", "search", "edit", "other"]
    path: str | None = None
    diff: str | None = None
    options: list[ToolPermissionOption]


class ToolPermissionResult(WireModel):
    outcome: PermissionOutcome
