"""Conversation messages: Anthropic content blocks, Baton's Message and what a client appends."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from baton.core.conversation.shared_bookkeeping import Shared, share, share_keys
from baton.core.conversation.wire_model import WireModel


def now_iso() -> str:
    """The current time as an ISO-8601 UTC string (the wire's time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(prefix: str = "msg") -> str:
    """A fresh, sortable-enough, URL-safe id."""
    return f"{prefix}_{secrets.token_hex(8)}"


# what a tool result holds once a microcompaction cleared it (Baton's, or Claude Code's imported)
CLEARED_RESULT = "[Old tool result content cleared]"


class _Block(Shared):
    """Content blocks keep the API's own field names and any extra field the API adds."""

    model_config = ConfigDict(extra="allow")


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    source: dict[str, Any]


class DocumentBlock(_Block):
    type: Literal["document"] = "document"
    source: dict[str, Any]


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: Any = Field(default_factory=dict)


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


class ThinkingBlock(_Block):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(_Block):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class CompactionBlock(_Block):
    """A summary the API wrote (compaction on demand), kept exactly as the API returned it:
    `content`, its `signature` and every other field it came with (`encrypted_content`,
    `tool_changes`) go back verbatim, first in every later request. Only Baton places one,
    as the summary message of a compaction; clients cannot append it."""

    type: Literal["compaction"] = "compaction"
    content: str | None = None
    signature: str | None = None


ContentBlock = Annotated[
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | CompactionBlock,
    Field(discriminator="type"),
]
CONTENT_ADAPTER: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])

Role = Literal["user", "assistant"]
Kind = Literal["message", "summary", "attachment"]
AttachmentLabel = Literal["Restored file", "Project instructions", "Attached file", "Selection"]
RESTORED_FILE: AttachmentLabel = "Restored file"
PROJECT_INSTRUCTIONS: AttachmentLabel = "Project instructions"
ATTACHED_FILE: AttachmentLabel = "Attached file"  # attached by the user with a prompt
SELECTION: AttachmentLabel = "Selection"


class LineRange(WireModel):
    """Lines of a file, 1-based and inclusive."""

    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


class Attachment(WireModel):
    """The file an attachment message put back, and its label: an editor file or the project
    instructions. The text's first line says the same to the model: `<label>: <path>`."""

    path: str
    label: AttachmentLabel
    kind: Literal["file", "selection"] | None = None  # attached with a prompt: what
    range: LineRange | None = None  # attached with a prompt: the lines it holds

    def heading(self) -> str:
        return f"{self.label}: {self.path}"

    @classmethod
    def from_heading(cls, text: str) -> Attachment | None:
        """The attachment a text's first line names (`heading`); how an attachment written
        before the field existed is read back."""
        first = text.lstrip().split("\n", 1)[0]
        for label in (RESTORED_FILE, PROJECT_INSTRUCTIONS):
            if first.startswith(f"{label}: "):
                path = first[len(label) + 2 :].strip()  # the whole line: notes go below it
                return cls(path=path, label=label) if path else None
        return None


class ApiUsage(WireModel, Shared):
    """The usage an API response reported (one response, not a running total)."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)

    @property
    def context_tokens(self) -> int:
        """Everything that was in the context when the response ended."""
        return (
            self.input_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
            + self.output_tokens
        )

    @property
    def is_real(self) -> bool:
        """All-zero usage comes from synthetic records and never anchors a count."""
        return self.context_tokens > 0


class ToolCallInfo(WireModel):
    """A tool call as the panel shows it (views only: never stored, never sent to the API)."""

    tool_use_id: str
    tool: str
    title: str
    status: Literal["pending", "running", "done", "denied", "failed"]
    summary: str | None = None
    path: str | None = None
    diff: str | None = None


# a reply whose view changed while it streamed (a compaction committed meanwhile) records
# its request's fingerprint behind this mark: its usage counted the view before the change
MOVED_PREFIX = "moved:"


class Message(WireModel, Shared):
    """One message of a conversation as Baton stores it."""

    id: str = Field(default_factory=new_id)
    role: Role
    kind: Kind = "message"
    content: list[ContentBlock]
    created_at: str = Field(default_factory=now_iso)
    tokens: int = 0
    api_message_id: str | None = None
    usage: ApiUsage | None = None
    model: str | None = None
    pinned: bool = False
    stop_reason: str | None = None
    boundary_id: str | None = None  # summary / attachment: the compaction that placed it
    attachment: Attachment | None = None  # a restored file's attachment: which file
    # a summary: what the compaction that wrote it dropped, a line each (never sent to the model)
    dropped: list[str] | None = None
    # a reply: the fingerprint of the request payload it was generated after (system,
    # tools, messages); its thinking goes back only while that prefix is unchanged
    prefix_hash: str | None = None
    # a reply: the tokens of the budget note its request carried (its usage holds them; the
    # note itself is never stored), so a figure carried past it leaves them out
    note_tokens: int | None = None
    # a user message of the server's tool loop: its answers to a reply's calls, each told
    # to the client as the loop answered it (never a result a client appended)
    tool_loop: bool | None = None
    tool_calls: list[ToolCallInfo] | None = None  # views only (tools/display.py)

    @property
    def is_synthetic(self) -> bool:
        return self.model == "<synthetic>"

    @property
    def anchors_usage(self) -> bool:
        """True when this record's usage may anchor the context count: not a reply whose
        view changed while it streamed (`MOVED_PREFIX`), whose usage measured another."""
        usage = self.usage  # None on most records: told first
        return (
            usage is not None
            and self.role == "assistant"
            and usage.is_real
            and not self.is_synthetic
            and not (self.prefix_hash or "").startswith(MOVED_PREFIX)
        )

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    def text(self) -> str:
        """The message's plain text blocks, joined."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def has_text(self) -> bool:
        return any(isinstance(b, TextBlock) and b.text.strip() for b in self.content)

    @property
    def is_tool_result_only(self) -> bool:
        """A user record that only carries tool results (not a prompt the user typed)."""
        only = False
        if self.role == "user" and self.content:
            only = True
            for block in self.content:  # a loop, not all() over a generator: an import asks
                if not isinstance(block, ToolResultBlock):  # it of every message it makes
                    only = False
                    break
        return only

    @property
    def is_user_prompt(self) -> bool:
        return self.role == "user" and self.kind == "message" and not self.is_tool_result_only


def share_bookkeeping(message: Message) -> Message:
    """`message`, just loaded, with pydantic's bookkeeping shared (`shared_bookkeeping`)."""
    share((message, message.usage, *message.content))
    share_keys(message)
    share_keys(message.usage)
    for block in message.content:
        share_keys(block)
    return message


class MessageInput(WireModel):
    """What a client may append: content as a string or API blocks."""

    role: Role
    content: str | list[ContentBlock]
    id: str | None = None
    api_message_id: str | None = None
    usage: ApiUsage | None = None

    def blocks(self) -> list[ContentBlock]:
        if isinstance(self.content, str):
            return [TextBlock(text=self.content)]
        return list(self.content)


def text_message(role: Role, text: str, kind: Kind = "message", **fields: Any) -> Message:
    return Message(role=role, kind=kind, content=[TextBlock(text=text)], **fields)
