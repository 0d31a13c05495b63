"""Context budget: model windows, thresholds, and the Usage a client's meter shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Self

from pydantic import Field

from baton.core.conversation.wire_model import WireModel
from baton.core.models.windows import LONG_WINDOW, lookup_model
from baton.core.models.windows import (
    ModelLimits as ModelLimits,  # re-exported for budget_for callers
)
from baton.core.settings import Settings
from baton.core.usage.calibration import MIN_CALIBRATION_SAMPLE as MIN_CALIBRATION_SAMPLE
from baton.core.usage.calibration import observe_response as observe_response
from baton.core.usage.overhead import UsageBasis
from baton.core.usage.wording import UNATTRIBUTED_LABEL as UNATTRIBUTED_LABEL
from baton.core.usage.wording import PausedBy, UsageText, describe

DEFAULT_WINDOW = 200_000
# Windows from this size up get the budget settings' figures as they are; smaller windows
# get each figure scaled by window / FULL_MARGINS_WINDOW, so the tiers keep their order.
FULL_MARGINS_WINDOW = 100_000


@dataclass(frozen=True)
class Budget:
    context_window: int
    max_output: int
    reserved: int
    effective_window: int
    auto_compact_threshold: int
    warning_threshold: int
    error_threshold: int
    blocking_limit: int


def budget_for(
    model: str, settings: Settings, api_limits: ModelLimits | None = None
) -> tuple[Budget, str | None]:
    """The budget for `model`, and a warning when its window had to be guessed."""
    spec, long = lookup_model(model)
    limits = api_limits or ModelLimits()
    figures = settings.budget
    warning: str | None = None
    if settings.context_window:
        window = settings.context_window
    elif long:
        window = LONG_WINDOW
    elif limits.max_input_tokens:
        window = limits.max_input_tokens
    elif spec is not None:
        window = spec.context_window
    else:
        window = DEFAULT_WINDOW
        warning = f"unknown model {model!r}: assuming a {DEFAULT_WINDOW:,}-token window"
    max_output = limits.max_tokens or (spec.max_output if spec else figures.reserved_summary_output)

    def scaled(figure: int) -> int:
        return figure if window >= FULL_MARGINS_WINDOW else figure * window // FULL_MARGINS_WINDOW

    reserved = min(max_output, scaled(figures.reserved_summary_output), window)
    effective = window - reserved
    blocking = max(0, effective - scaled(figures.blocking_margin))
    threshold = max(0, min(effective - scaled(figures.auto_compact_margin), blocking))
    percent = settings.auto_compact.threshold_percent
    if percent is not None:
        threshold = min(round(effective * percent / 100), blocking)
    error_at = max(0, threshold - scaled(figures.error_margin))
    warning_at = min(error_at, max(0, threshold - scaled(figures.warning_margin)))
    budget = Budget(
        context_window=window,
        max_output=max_output,
        reserved=reserved,
        effective_window=effective,
        auto_compact_threshold=threshold,
        warning_threshold=warning_at,
        error_threshold=error_at,
        blocking_limit=blocking,
    )
    return budget, warning


UsageState = Literal["ok", "warning", "error", "blocking"]


class Breakdown(WireModel):
    system: int = 0
    tools: int = 0
    messages: int = 0
    summary: int = 0
    attachments: int = 0
    # an imported session's real usage beyond the estimate of its view: what the client
    # that wrote the file sent besides the conversation (its system prompt and tools); or,
    # after a compaction, what the last usage showed besides the view (text.labels says whose)
    unattributed: int = 0
    free: int = 0


class RequestSize(WireModel):
    """The request the conversation as it stands makes, in bytes, measured once its images
    and documents pass half the API's limit on a whole request (32 MB, whatever its
    tokens): no token figure shows how near that limit they take it."""

    request_bytes: int = Field(description="about the size of the next request's body")
    limit: int = Field(description="the API's limit on a whole request: 33,554,432 (32 MB)")
    images: int
    documents: int
    media_bytes: int = Field(description="the bytes of base64 of its images and documents")

    @property
    def over(self) -> bool:
        """Whether the API refuses the request for its size (a send is refused before it)."""
        return self.request_bytes > self.limit

    @property
    def near(self) -> bool:
        """Whether it is near that limit (over 75% of it): said in words from there."""
        return self.request_bytes > self.limit * 3 // 4


class Usage(WireModel):
    session_id: str
    model: str
    context_window: int
    effective_window: int
    auto_compact_threshold: int
    warning_threshold: int
    error_threshold: int
    blocking_limit: int
    used_tokens: int
    percent_used: float
    percent_left: int
    state: UsageState
    estimated: bool
    auto_compact_enabled: bool
    auto_compact_paused: bool
    breakdown: Breakdown
    estimator_exact: bool = True
    warnings: list[str] = Field(default_factory=list)
    auto_compact_paused_by: PausedBy | None = Field(
        default=None, description="why auto-compact does not run, or null while it can"
    )
    basis: UsageBasis = Field(default="estimate", description="where usedTokens comes from")
    text: UsageText = Field(default_factory=UsageText, description="the usage in words")
    request_size: RequestSize | None = Field(
        default=None,
        description="the next request's bytes, once its images and documents pass 16 MB",
    )

    def worded(self) -> Self:
        """This usage with its sentences (`text`) written from its figures."""
        return self.model_copy(update={"text": describe(self)})


def usage_state(
    used: int, budget: Budget, auto_paused: bool = False, size: RequestSize | None = None
) -> UsageState:
    if used >= budget.blocking_limit or (size is not None and size.over):  # refused
        return "blocking"
    if auto_paused or used >= budget.error_threshold:
        return "error"  # a paused auto-compact cannot save the user: say so loudly
    if used >= budget.warning_threshold or (size is not None and size.near):
        return "warning"
    return "ok"


def percent_left(used: int, budget: Budget, auto_enabled: bool) -> int:
    limit = budget.auto_compact_threshold if auto_enabled else budget.effective_window
    if limit <= 0:
        return 0
    return min(100, max(0, round((limit - used) / limit * 100)))
