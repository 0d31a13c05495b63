"""The wire models protocol.py pairs with methods: request params, command arguments, results.

Core payloads (Message, Usage, CompactResult, ...) live in core and are re-exported by
protocol.py; the models here exist only for the wire.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, ConfigDict, Field

from baton.core.compaction.dropped import Dropped
from baton.core.conversation.boundary import Direction
from baton.core.conversation.messages import (
    ContentBlock,
    LineRange,
    Message,
    MessageInput,
    WireModel,
)
from baton.core.usage.budget import Usage
from baton.core.usage.draft import Draft
from baton.core.usage.overhead import ClientContext

# `pivotMessageId` is the name everywhere; commands said `messageId` before, still accepted.
PivotId = Annotated[
    str,
    Field(
        validation_alias=AliasChoices("pivotMessageId", "messageId", "pivot_message_id"),
        description="the pivot message (the old spelling `messageId` is still accepted)",
    ),
]
OptionalPivotId = Annotated[
    str | None,
    Field(
        default=None,
        validation_alias=AliasChoices("pivotMessageId", "messageId", "pivot_message_id"),
        description="the pivot message (the old spelling `messageId` is still accepted)",
    ),
]

# ---- params and command arguments (client -> server) -------------------------------------


class Params(WireModel):
    """Request parameters: unknown keys are ignored, wrong types are `invalid_params`."""

    model_config = ConfigDict(extra="ignore", strict=False)


class NoParams(Params):
    pass


class CreateParams(Params):
    title: str | None = None
    system_prompt: str | None = None
    model: str | None = None
    client_context: ClientContext | None = Field(
        default=None, description="what the client sends besides the messages (it counts)"
    )


class SessionParams(Params):
    session_id: str


class UsageParams(SessionParams):
    draft: Draft | None = Field(
        default=None, description="a prompt not sent yet: the usage as it would be once sent"
    )


class SetModelParams(SessionParams):
    model: str = Field(min_length=1, max_length=200, description="the model replies come from")


class PageParams(SessionParams):
    """A session's view read a page at a time (`get` and `render`); neither given: all of it."""

    offset: int | None = Field(default=None, ge=0, description="the first message of the page")
    limit: int | None = Field(default=None, ge=1, description="at most this many messages")

    @property
    def paged(self) -> bool:
        return self.offset is not None or self.limit is not None

    def bounds(self, total: int) -> tuple[int, int]:
        """[start, stop) of the page in a view of `total` messages."""
        start = min(self.offset or 0, total)
        return start, total if self.limit is None else min(total, start + self.limit)


class ReplacedParams(PageParams):
    """The messages one compaction replaced (`baton/session/replaced`), a page at a time."""

    boundary_id: str = Field(min_length=1, description="the compaction (`Message.boundaryId`)")


class AppendParams(SessionParams):
    messages: list[MessageInput] = Field(min_length=1)
    client_context: ClientContext | None = Field(
        default=None, description="what the client sends besides the messages, if it changed"
    )


class AttachmentInput(Params):
    """A file (or its visible range) or a selection the editor attaches to the prompt;
    `text` is the editor's (absent: the server reads the file, `range` of it)."""

    kind: Literal["file", "selection"]
    path: str = Field(min_length=1, description="an absolute file path or a file: URI")
    text: str | None = None
    range: LineRange | None = None
    language_id: str | None = None


class SendParams(SessionParams):
    content: str | list[ContentBlock] | None = None
    tools: list[dict[str, Any]] | None = None
    attachments: list[AttachmentInput] | None = None


class ImportParams(Params):
    path: str
    format: Literal["claude-code"] = "claude-code"
    title: str | None = None


class CompactParams(SessionParams):
    direction: Direction = "all"
    pivot_message_id: OptionalPivotId
    end_message_id: str | None = None
    instructions: str | None = None
    dry_run: bool = False


class DraftPreviewParams(SessionParams):
    """A compaction written and measured, not committed (`baton/compact/preview`); with
    `draftId`, that draft written again (its direction, these `instructions`), or with
    `summary` too, measured again with that text (no summary is written)."""

    direction: Direction = "all"
    pivot_message_id: OptionalPivotId
    end_message_id: str | None = None
    instructions: str | None = None
    draft_id: str | None = Field(
        default=None, description="regenerate this draft (with `instructions` when given)"
    )
    summary: str | None = Field(
        default=None,
        description="with `draftId`: that draft with this edited summary, measured again",
    )


class ApplyDraftParams(SessionParams):
    draft_id: str
    summary: str | None = Field(
        default=None, description="the summary as the user edited it (absent: as written)"
    )


class DraftParams(SessionParams):
    draft_id: str


class UncompactParams(SessionParams):
    boundary_id: str | None = None


class RewindParams(SessionParams):
    message_id: str = Field(description="the first message taken out of the view")


class RenameParams(SessionParams):
    title: str = Field(min_length=1, max_length=200, description="the session's new title")


class ModelsParams(Params):
    session_id: str | None = Field(
        default=None, description="the session whose model is marked current (absent: none)"
    )


class PinParams(SessionParams):
    message_id: str
    pinned: bool


class ActiveEditorParams(Params):
    uri: str | None = None


class CompactCommandArgs(SessionParams):
    direction: Direction = "all"
    pivot_message_id: OptionalPivotId
    end_message_id: str | None = None
    instructions: str | None = None


class PivotCommandArgs(SessionParams):
    pivot_message_id: PivotId
    instructions: str | None = None


class PreviewCommandArgs(SessionParams):
    direction: Direction = "all"
    pivot_message_id: OptionalPivotId
    end_message_id: str | None = None


class RangeCommandArgs(SessionParams):
    pivot_message_id: PivotId
    end_message_id: str
    instructions: str | None = None


# ---- results -----------------------------------------------------------------------------


class DamageInfo(WireModel):
    """What a session's transcript lost (`Session.damaged`; absent when it lost nothing)."""

    lines: int = Field(description="unreadable lines and records skipped (kept in <file>.bad)")
    lost_messages: int = Field(description="messages the view or a compaction named that are gone")
    repaired_messages: int = Field(
        description="messages shown changed (tool blocks as text) to fit the API rules"
    )
    header_missing: bool = Field(description="no valid header line: the session is read-only")
    problems: list[str] = Field(description="one sentence per kind of damage")


class SessionSource(WireModel):
    """Where a session came from: a Claude Code transcript it was imported from, or a
    file the CLI compacted into it; `file` is the file's name, `path` the whole path."""

    kind: Literal["claude-code", "compacted"]
    file: str
    path: str


class SessionInfo(WireModel):
    """A conversation (`Session` on the wire); `readOnly` when another process holds its
    transcript or the transcript has no valid header (it can be read, and changing it fails
    with `session_locked`); `damaged` when its transcript lost records."""

    session_id: str
    title: str
    model: str
    created_at: str
    updated_at: str
    uri: str
    compactions: int
    read_only: bool = False
    damaged: DamageInfo | None = None
    context_tokens: int | None = Field(
        default=None,
        description="the last known context size in tokens (the last change this server "
        "saw, else the last reply's API usage); absent when unknown",
    )
    source: SessionSource | None = Field(
        default=None, description="where the session came from (absent: made here)"
    )


class SessionList(WireModel):
    sessions: list[SessionInfo]


class TodoEntry(WireModel):
    """One item of the session's task list (the model's latest `TodoWrite` call)."""

    content: str
    status: Literal["pending", "in_progress", "completed"]
    active_form: str = Field(default="", description="the item said while it is in progress")


class SessionView(WireModel):
    session: SessionInfo
    messages: list[Message]
    usage: Usage
    offset: int | None = None  # a page (offset or limit given): where it starts in the view
    total_messages: int | None = None  # a page: the messages in the whole view
    todos: list[TodoEntry] | None = Field(
        default=None, description="the latest task list (absent: the session has none)"
    )


class ReplacedMessages(WireModel):
    """What a compaction replaced, as they were before it (`summarizedMessageIds`' messages,
    read from the transcript): the page from `offset`, of `totalMessages` in all."""

    boundary_id: str
    messages: list[Message]
    offset: int
    total_messages: int


class AppendResult(WireModel):
    message_ids: list[str]
    usage: Usage
    repairs: list[str]


class SendResult(WireModel):
    message: Message
    usage: Usage


class ModelSwitch(WireModel):
    """The session with its new model, its usage against the new model's budget, and a
    sentence when the conversation is now past the auto-compact point or over the limit."""

    session: SessionInfo
    usage: Usage
    warning: str | None = None


class UncompactResult(WireModel):
    usage: Usage


class RewindResult(WireModel):
    """A rewind: its boundary (`baton/uncompact` with this id puts the messages back), the
    messages it took out of the view, and the usage after it."""

    boundary_id: str
    rewound_message_ids: list[str]
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
    offset: int | None = None  # a page: its first message's place in the view
    total_messages: int | None = None  # a page: the messages in the whole view
    start_line: int | None = None  # a page: the document line its text starts on


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
