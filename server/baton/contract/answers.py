"""The answers the server gives to requests: sessions and their list, views, pages, renders.

protocol.py pairs them with their methods; core payloads (Message, Usage, CompactResult,
...) live in core and are re-exported by protocol.py, the models here exist only for the wire.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from baton.core.conversation.messages import Message
from baton.core.conversation.wire_model import WireModel
from baton.core.usage.budget import Usage


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


class ImportedSession(SessionInfo):
    """`Session` as `baton/session/import` answers it, with what the import found."""

    notes: list[str] = Field(
        default_factory=list,
        description="what the import skipped (an unreadable or cut-short line, a record "
        "without content), repaired or joined, one line each, as `baton import` prints them "
        "(at most 50, the last saying how many more); empty when the file went in as found",
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


class SetAside(WireModel):
    """Replies a send took out of the view as a rewind does (kept in the transcript;
    `baton/uncompact` with `boundaryId` puts them back): `"refusal"`, the reply the API
    refused, with the answers to its calls (no later request may carry it), or `"retry"`,
    the interrupted reply a send with no content made again."""

    boundary_id: str
    message_ids: list[str]
    reason: Literal["refusal", "retry"]


class SendResult(WireModel):
    message: Message
    usage: Usage
    set_aside: SetAside | None = None


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
