"""A pending prompt's usage and what Send would do with it; what a model switch leaves.

The draft is what the user is typing (its text, its attachments) before it is a message;
nothing is written. The figure is the session's usage plus the draft's (calibrated)
estimate; the verdict says what Send would lead to: it fits, it crosses the auto-compact
point (Baton compacts before the request goes out), it is over the limit with auto-compact
off or paused (compact first), or it cannot fit even after a compaction (the system
prompt, the tools and the prompt alone reach the limit).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import Field

from baton.core.conversation.invariants import block_problems
from baton.core.conversation.messages import ContentBlock, TextBlock
from baton.core.conversation.request_bytes import blocks_media
from baton.core.conversation.wire_model import WireModel
from baton.core.errors import InvalidParams
from baton.core.usage.budget import Budget, RequestSize, Usage, percent_left, usage_state
from baton.core.usage.estimator import MESSAGE_OVERHEAD, Estimator
from baton.core.usage.wording import MAX_MB, auto_runs, held, over_limit, paused_why

Verdict = Literal["fits", "autoCompact", "compactFirst", "tooLarge"]


class Draft(WireModel):
    """A prompt not sent yet: its text and its attachments (user content blocks: text,
    image, document), as `baton/session/send` would take them."""

    text: str = ""
    attachments: list[ContentBlock] = Field(default_factory=list)

    def blocks(self) -> list[ContentBlock]:
        head: list[ContentBlock] = [TextBlock(text=self.text)] if self.text else []
        return head + list(self.attachments)


class DraftInfo(WireModel):
    """What sending the draft would do to the context."""

    tokens: int = Field(description="the draft's own tokens (estimated, calibrated)")
    used_before: int = Field(description="the tokens in use now, without the draft")
    verdict: Verdict = Field(
        description=(
            "fits; autoCompact: past the auto-compact point, Baton compacts before the "
            "request goes out; compactFirst: over the limit while auto-compact is off or "
            "paused; tooLarge: the prompt cannot fit even after a compaction"
        )
    )
    message: str | None = Field(
        default=None, description="one sentence for the user (absent when it fits)"
    )


class DraftUsage(Usage):
    """`baton/usage`'s answer: the usage, as it would be once the draft is sent when a
    draft was given (`draft` then says what Send does)."""

    draft: DraftInfo | None = None


def draft_blocks(draft: Draft) -> list[ContentBlock]:
    """The draft's content blocks, checked as a user prompt's (InvalidParams otherwise)."""
    blocks = draft.blocks()
    problems = block_problems("user", blocks)
    if problems:
        raise InvalidParams("invalid draft: " + "; ".join(problems[:5]))
    return blocks


class DraftTokens(NamedTuple):
    """A draft's raw tokens as a user prompt, and the part of them its images and documents
    make (in the API's own units: the calibration factor is the text's)."""

    raw: int
    media: int


def draft_tokens(draft: Draft, estimator: Estimator) -> DraftTokens:
    """The draft's raw tokens as a user prompt and its media's (InvalidParams for one that
    cannot be a prompt)."""
    blocks = draft_blocks(draft)
    if not blocks:
        return DraftTokens(0, 0)
    raw = MESSAGE_OVERHEAD + estimator.count_blocks(blocks)
    return DraftTokens(raw, estimator.count_media(draft.attachments))


def with_draft(
    usage: Usage,
    draft: Draft,
    estimator: Estimator,
    budget: Budget,
    counted: DraftTokens | None = None,
    joins: bool = False,
) -> DraftUsage:
    """`usage` (computed with `budget`) as it would be once `draft` is appended as the
    user's prompt. What no compaction can take away is the system prompt and the tools
    (as `usage` counts them): with the draft, that is the floor a compaction could reach.
    `counted`: the draft's `draft_tokens`, when counted already (off the event loop);
    `joins`: the view ends in the user's turn, which the prompt joins (its framing is not
    sent)."""
    raw, media = counted if counted is not None else draft_tokens(draft, estimator)
    if joins and raw:
        raw -= MESSAGE_OVERHEAD
    # its images and documents are in the API's units already: the factor is the text's
    tokens = estimator.calibrated(raw, media if raw else 0)
    used = usage.used_tokens + tokens
    fixed = usage.breakdown.system + usage.breakdown.tools
    size = usage.request_size
    if size is not None:  # the draft's images and documents go into the request too
        images, documents, media = blocks_media(draft.attachments)
        size = size.model_copy(
            update={
                "request_bytes": size.request_bytes + media,
                "images": size.images + images,
                "documents": size.documents + documents,
                "media_bytes": size.media_bytes + media,
            }
        )
    verdict, message = _verdict(usage, used, tokens, fixed + tokens, size)
    breakdown = usage.breakdown.model_copy(
        update={
            "messages": usage.breakdown.messages + tokens,
            "free": max(0, usage.context_window - used),
        }
    )
    return DraftUsage.model_validate(
        {
            **usage.model_dump(),
            "used_tokens": used,
            "percent_used": round(min(100.0, max(0.0, 100 * used / usage.context_window)), 1),
            "percent_left": percent_left(used, budget, usage.auto_compact_enabled),
            "state": usage_state(used, budget, usage.auto_compact_paused, size),
            "estimated": True,
            "breakdown": breakdown.model_dump(),
            "request_size": size.model_dump() if size is not None else None,
            "draft": DraftInfo(
                tokens=tokens, used_before=usage.used_tokens, verdict=verdict, message=message
            ).model_dump(),
        }
    ).worded()  # its words say the figures with the draft, not the ones before it


def plain(usage: Usage) -> DraftUsage:
    """`usage` as `baton/usage` answers it when no draft was given."""
    return DraftUsage.model_validate(usage.model_dump())


def _verdict(
    usage: Usage, used: int, tokens: int, floor: int, size: RequestSize | None = None
) -> tuple[Verdict, str | None]:
    auto = auto_runs(usage)
    limit = usage.blocking_limit
    if floor >= limit:
        return "tooLarge", (
            f"This prompt is about {tokens:,} tokens; with the system prompt and tools that "
            f"is {floor:,}, over the limit of {limit:,}, so it cannot fit even after a "
            "compaction: shorten it or leave out attachments."
        )
    if size is not None and size.over:  # whatever its tokens
        request = (
            f"Sending this makes a request of about {size.request_bytes:,} bytes, over the "
            f"API's {MAX_MB} whatever its tokens ({held(size)})"
        )
        if auto:
            return "autoCompact", f"{request}: Baton compacts the span holding them first."
        return "compactFirst", (
            f"{request}; compact the span holding them first (a summary keeps no image or "
            "document)."
        )
    if used >= usage.auto_compact_threshold and auto:
        return "autoCompact", (
            f"Sending this takes the context to {used:,} tokens, past the auto-compact point "
            f"({usage.auto_compact_threshold:,}): Baton compacts the conversation first."
        )
    if used >= limit:
        why = paused_why(usage.auto_compact_paused_by) if usage.auto_compact_paused else "off"
        return "compactFirst", (
            f"Sending this takes the context to {used:,} tokens, over the limit of "
            f"{limit:,}, and auto-compact is {why}; compact the conversation first."
        )
    return "fits", None


def switch_warning(usage: Usage) -> str | None:
    """What a model switch left: a sentence when the conversation is over the new model's
    limit, or past its auto-compact point while auto-compact runs (the next send compacts
    first), else None."""
    used, model = usage.used_tokens, usage.model
    if used >= usage.blocking_limit:
        return (
            f"{model}: {used:,} tokens in use, over its limit of {usage.blocking_limit:,} "
            f"({usage.context_window:,}-token window): {over_limit(usage)}."
        )
    if auto_runs(usage) and used >= usage.auto_compact_threshold:
        return (
            f"{model}: {used:,} tokens in use, past its auto-compact point "
            f"({usage.auto_compact_threshold:,}): the next send compacts first."
        )
    return None
