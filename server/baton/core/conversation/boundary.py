"""The boundary record: what one compaction replaced, and the view it leaves."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal, get_args

from pydantic import Field

from baton.core.conversation.messages import Message, new_id, now_iso
from baton.core.conversation.wire_model import WireModel

Direction = Literal["all", "up_to", "from", "range"]
"""What a compaction request summarizes (PROTOCOL.md `direction`): the one declaration."""
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)
BoundaryDirection = Direction | Literal["microcompact", "rewind"]
"""A committed boundary's direction: a requested one, idle microcompaction's, or a rewind's
(the view cut before a message, to edit a prompt or retry a reply: `summarized_ids` are the
messages it took out, which undo puts back)."""
NOT_COMPACTIONS = frozenset({"microcompact", "rewind"})
"""The directions a session's `compactions` does not count (PROTOCOL.md): the list's index
and an open session count alike."""
Trigger = Literal["manual", "auto"]


class RestoredFile(WireModel):
    uri: str
    tokens: int
    truncated: bool = False


class SkippedFile(WireModel):
    """An editor file a compaction did not restore, and why (never what it holds)."""

    uri: str
    reason: str


class AdjustedPivot(WireModel):
    requested: str
    used: str
    why: str


class RetentionFigure(WireModel):
    kept: int
    total: int


class Retention(WireModel):
    prompts: RetentionFigure
    paths: RetentionFigure
    errors: RetentionFigure
    # the user's standing instructions ("always ...", "never ..."), when the span gave any
    instructions: RetentionFigure | None = None


class Boundary(WireModel):
    """One committed compaction. Written to the transcript as a single line.

    `new_messages` are the messages the compaction introduced (the summary, restored-file
    attachments, microcompacted copies); `stands_for` maps each of them to the ids it
    replaced (an attachment replaces nothing). `view_before` is the snapshot the plan was
    made from and `view_after` the view it produced.
    """

    id: str = Field(default_factory=lambda: new_id("cmp"))
    trigger: Trigger = "manual"
    direction: BoundaryDirection = "all"
    created_at: str = Field(default_factory=now_iso)
    summarizer: str = "extractive"
    pre_tokens: int = 0
    post_tokens: int = 0
    summary_id: str | None = None
    new_messages: list[Message] = Field(default_factory=list)
    stands_for: dict[str, list[str]] = Field(default_factory=dict)
    summarized_ids: list[str] = Field(default_factory=list)
    kept_ids: list[str] = Field(default_factory=list)
    view_before: list[str] = Field(default_factory=list)
    view_after: list[str] = Field(default_factory=list)
    restored_files: list[RestoredFile] = Field(default_factory=list)
    skipped_files: list[SkippedFile] = Field(default_factory=list)
    retention: Retention | None = None
    adjusted_pivot: AdjustedPivot | None = None
    instructions: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def summary(self) -> Message | None:
        for message in self.new_messages:
            if message.id == self.summary_id:
                return message
        return None

    @property
    def summary_text(self) -> str | None:
        summary = self.summary
        return summary.text() if summary is not None else None


def view_after_commit(
    boundary: Boundary, current_view: list[str], *, late_at_end: bool = False
) -> list[str]:
    """The view once `boundary` commits: its new view, then every id that joined since the
    snapshot (messages appended while the compaction ran are not lost).

    With `late_at_end` (a damaged transcript), only ids after the last one the snapshot
    holds count as late: appends only ever land at the end, and messages a lost boundary
    had replaced must not come back after this one's view."""
    before = set(boundary.view_before)
    if late_at_end:
        last = max((n for n, mid in enumerate(current_view) if mid in before), default=-1)
        current_view = current_view[last + 1 :]
    late = [mid for mid in current_view if mid not in before]
    return [*boundary.view_after, *late]


def expand(
    ids: list[str], stands_for: dict[str, list[str]], *, skip: Collection[str] = ()
) -> list[str]:
    """Replace each id that `stands_for` names by the ids it stood for, in place.

    An id is placed once, where it first comes: a pinned message that stayed verbatim
    beside the summary standing for its span goes back to its old place on undo. An id
    in `skip` is not placed at all.
    """
    out: list[str] = []
    placed: set[str] = set(skip)
    for mid in ids:
        for one in stands_for.get(mid, [mid]):
            if one not in placed:
                placed.add(one)
                out.append(one)
    return out
