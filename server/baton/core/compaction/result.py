"""What a compaction was asked to do and what it reports back (`CompactResult` on the wire)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from baton.core.compaction.dropped import Dropped
from baton.core.conversation.boundary import (
    AdjustedPivot,
    Boundary,
    BoundaryDirection,
    Direction,
    RestoredFile,
    Retention,
    SkippedFile,
    Trigger,
)
from baton.core.conversation.messages import ApiUsage
from baton.core.conversation.wire_model import WireModel


@dataclass(frozen=True)
class CompactRequest:
    """One compaction request. The planner checks `direction` again at run time (a bad one
    is `invalid_params`), for callers that build a request from untyped input."""

    direction: Direction = "all"
    pivot_message_id: str | None = None
    end_message_id: str | None = None
    instructions: str | None = None
    dry_run: bool = False
    trigger: Trigger = "manual"
    # a dry run writes the summary offline to measure the context after it; without
    # `measure` it only plans (which messages go, which stay), as a hover needs
    measure: bool = True
    # the id its boundary takes (a new one when None): a front end that names the
    # compaction as it starts names it as the committed boundary is named ever after
    boundary_id: str | None = None


class CompactResult(WireModel):
    """What one compaction did. A dry run has `summary` null, `dryRun` true and an empty
    `boundaryId` (nothing was committed)."""

    boundary_id: str
    direction: BoundaryDirection
    summary: str | None  # required: always on the wire, null on a dry run
    summarized_message_ids: list[str] = Field(default_factory=list)
    kept_message_ids: list[str] = Field(default_factory=list)
    restored_files: list[RestoredFile] = Field(default_factory=list)
    skipped_files: list[SkippedFile] = Field(default_factory=list)
    pre_tokens: int = 0
    # the context right after it, as the meter then shows it: an estimate (with what the
    # API last saw besides the messages carried over) until the next reply's usage
    post_tokens: int = 0
    trigger: Trigger = "manual"
    summarizer: str = ""
    adjusted_pivot: AdjustedPivot | None = None
    retention: Retention | None = None
    dry_run: bool = False
    # Why the compaction did not go as the settings asked, e.g. `server` falling back to
    # Baton's own summary; empty when it did.
    warnings: list[str] = Field(default_factory=list)
    # what went: messages summarized, tool results cleared, files not restored, facts lost
    dropped: Dropped | None = None
    # the summary request's usage as the API reported it, when a model wrote the summary
    # (Baton's `anthropic` summarizer; a reminder or a shorter retry adds its own)
    summary_usage: ApiUsage | None = None

    @classmethod
    def from_boundary(cls, boundary: Boundary, summary: str | None) -> CompactResult:
        """The result of a committed compaction; `summary` is the summary body."""
        return cls(
            boundary_id=boundary.id,
            direction=boundary.direction,
            summary=summary,
            summarized_message_ids=list(boundary.summarized_ids),
            kept_message_ids=list(boundary.kept_ids),
            restored_files=list(boundary.restored_files),
            skipped_files=list(boundary.skipped_files),
            pre_tokens=boundary.pre_tokens,
            post_tokens=boundary.post_tokens,
            trigger=boundary.trigger,
            summarizer=boundary.summarizer,
            adjusted_pivot=boundary.adjusted_pivot,
            retention=boundary.retention,
        )
