"""What a compaction was asked to do and what it reports back (`CompactResult` on the wire)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from baton.core.boundary import (
    AdjustedPivot,
    Boundary,
    Direction,
    RestoredFile,
    Retention,
    SkippedFile,
    Trigger,
)
from baton.core.messages import WireModel


@dataclass(frozen=True)
class CompactRequest:
    """One compaction request; `direction` is checked by the planner (a bad one is
    `invalid_params`), so it is a plain string here."""

    direction: str = "all"
    pivot_message_id: str | None = None
    end_message_id: str | None = None
    instructions: str | None = None
    dry_run: bool = False
    trigger: Trigger = "manual"


class CompactResult(WireModel):
    """PROTOCOL.md's `CompactResult`. A dry run has `summary` None, `dry_run` True and an
    empty `boundary_id` (nothing was committed)."""

    boundary_id: str
    direction: Direction
    summary: str | None = None
    summarized_message_ids: list[str] = Field(default_factory=list)
    kept_message_ids: list[str] = Field(default_factory=list)
    restored_files: list[RestoredFile] = Field(default_factory=list)
    skipped_files: list[SkippedFile] = Field(default_factory=list)
    pre_tokens: int = 0
    post_tokens: int = 0
    trigger: Trigger = "manual"
    summarizer: str = ""
    adjusted_pivot: AdjustedPivot | None = None
    retention: Retention | None = None
    dry_run: bool = False

    def wire(self) -> dict[str, Any]:
        """Optional fields are left out when empty, but `summary` is always present (null
        on a dry run), as the contract shows it."""
        out = super().wire()
        out["summary"] = self.summary
        return out

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
