"""The params and command arguments a client sends: what each request and command takes.

protocol.py pairs them with their methods; they exist only for the wire (core payloads such
as Message live in core). Unknown keys are ignored, wrong types are `invalid_params`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, ConfigDict, Field, Strict, StringConstraints

from baton.core.conversation.boundary import Direction
from baton.core.conversation.messages import ContentBlock, LineRange, MessageInput
from baton.core.conversation.wire_model import WireModel
from baton.core.models.windows import MODEL_NAME_MAX, model_name_problem
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


# a flag or a count is taken as the JSON type it is, never read from another one: "false"
# or 1 for a flag, "2" or true for a count, are `invalid_params` (a dry run sent as "false"
# would otherwise commit)
Flag = Annotated[bool, Strict()]
Count = Annotated[int, Strict()]


def _one_line(model: str) -> str:
    """A model's name, trimmed: one line without control characters (it is written into
    the session document's header line); an empty one is left to the caller."""
    problem = model_name_problem(model) if model else None
    if problem:
        raise ValueError(problem)
    return model


OneLine = AfterValidator(_one_line)


class Params(WireModel):
    """Request parameters: unknown keys are ignored, wrong types are `invalid_params`."""

    model_config = ConfigDict(extra="ignore", strict=False)


class NoParams(Params):
    pass


class CreateParams(Params):
    title: str | None = None
    system_prompt: str | None = None
    # a blank one: none given (the `model` setting's)
    model: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=MODEL_NAME_MAX), OneLine]
        | None
    ) = None
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
    model: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=MODEL_NAME_MAX),
        OneLine,
    ] = Field(description="the model replies come from")


class PageParams(SessionParams):
    """A session's view read a page at a time (`get` and `render`); neither given: all of it."""

    offset: Count | None = Field(default=None, ge=0, description="the first message of the page")
    limit: Count | None = Field(default=None, ge=1, description="at most this many messages")

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
    dry_run: Flag = False


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
    # trimmed before its length is checked, as create's title is
    title: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)
    ] = Field(description="the session's new title")


class ModelsParams(Params):
    session_id: str | None = Field(
        default=None, description="the session whose model is marked current (absent: none)"
    )


class PinParams(SessionParams):
    message_id: str
    pinned: Flag


class ActiveEditorParams(Params):
    uri: str | None = None


class CompactCommandArgs(SessionParams):
    direction: Direction = "all"
    pivot_message_id: OptionalPivotId
    end_message_id: str | None = None
    instructions: str | None = None
    # as the request takes it: never a commit where a plan was asked (None: not given, so a
    # code action's arguments name only what they ask)
    dry_run: Flag | None = None


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
