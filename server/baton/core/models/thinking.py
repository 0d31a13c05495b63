"""The `thinking` setting and the request parameter it becomes for a given model.

Per the Messages API documentation (BEHAVIOR.md section 10): Claude 4.5 and earlier
models take only a token budget (`{"type": "enabled", "budget_tokens": N}`, N >= 1,024 and
below `max_tokens`); Claude 4.6 takes both; 4.7 and later take only
`{"type": "adaptive"}`. Some models think whatever the request says (thinking cannot be
disabled there); models with preserved thinking prefix-check the thinking sent back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from pydantic.config import JsonDict

from baton.core.models.windows import longest_prefix, model_name

log = logging.getLogger(__name__)

MIN_BUDGET = 1_024
# a budget is sent below max_tokens, which lies inside the context window: none is larger
MAX_BUDGET = 1_000_000
DEFAULT_BUDGET = 16_000  # "adaptive" asked of a model that takes only a budget
ThinkingSetting = Literal["off", "adaptive"] | int | None


@dataclass(frozen=True)
class ThinkingSpec:
    budget: bool  # takes {"type": "enabled", "budget_tokens": N}
    adaptive: bool  # takes {"type": "adaptive"}
    can_disable: bool  # takes {"type": "disabled"} (False: thinking is always on)
    preserved: bool = False  # prefix-checks the thinking sent back


_OLD = ThinkingSpec(budget=True, adaptive=False, can_disable=True)
_BOTH = ThinkingSpec(budget=True, adaptive=True, can_disable=True)
_ADAPTIVE = ThinkingSpec(budget=False, adaptive=True, can_disable=True)
_ALWAYS = ThinkingSpec(budget=False, adaptive=True, can_disable=False)
_PRESERVED = ThinkingSpec(budget=False, adaptive=True, can_disable=False, preserved=True)
_NONE = ThinkingSpec(budget=False, adaptive=False, can_disable=True)

# Longest matching prefix wins (models.longest_prefix).
THINKING: dict[str, ThinkingSpec] = {
    "claude-fable-5-2": _PRESERVED,
    "claude-mythos-5-2": _PRESERVED,
    "claude-fable-5-1": _PRESERVED,
    "claude-mythos-5-1": _PRESERVED,
    "claude-opus-5-5": _PRESERVED,
    "claude-sonnet-5-5": _PRESERVED,
    "claude-haiku-5-5": _PRESERVED,
    "claude-fable-5": _ALWAYS,
    "claude-mythos-5": _ALWAYS,
    "claude-mythos-preview": ThinkingSpec(budget=True, adaptive=True, can_disable=False),
    "claude-opus-5": _ADAPTIVE,
    "claude-sonnet-5": _ADAPTIVE,
    "claude-opus-4-8": _ADAPTIVE,
    "claude-opus-4-7": _ALWAYS,
    "claude-opus-4-6": _BOTH,
    "claude-sonnet-4-6": _BOTH,
    "claude-opus-4-5": _OLD,
    "claude-opus-4-1": _OLD,
    "claude-opus-4": _OLD,
    "claude-sonnet-4-5": _OLD,
    "claude-sonnet-4": _OLD,
    "claude-haiku-4-5": _OLD,
    "claude-3-7-sonnet": _OLD,
    "claude-3-5-sonnet": _NONE,
    "claude-3-5-haiku": _NONE,
    "claude-3-opus": _NONE,
    "claude-3-haiku": _NONE,
}
# A model the table does not know is taken to be a current one: adaptive, may disable.
UNKNOWN = ThinkingSpec(budget=True, adaptive=True, can_disable=True)


def spec_for(model: str) -> ThinkingSpec:
    """The table's entry for `model` (provider spellings and `[1m]` suffixes accepted)."""
    best = longest_prefix(model_name(model)[0], THINKING, separators="-@:.")
    return THINKING[best] if best else UNKNOWN


THINKING_FORM: JsonDict = {  # what parse_thinking takes, for the settings manifest
    "pattern": r"^\s*([oO][fF][fF]|[aA][dD][aA][pP][tT][iI][vV][eE]|[0-9]+)\s*$",
    "patternErrorMessage": "off, adaptive or a token budget",
    "minimum": MIN_BUDGET,
    "maximum": MAX_BUDGET,
}


def parse_thinking(value: object) -> ThinkingSetting:
    """The setting's value: None (the model's default), "off", "adaptive" or a budget of
    MIN_BUDGET to MAX_BUDGET tokens (an int or a string of digits). Anything else:
    ValueError."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("thinking must be 'off', 'adaptive' or a token budget")
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("off", "adaptive"):
            return "off" if text == "off" else "adaptive"
        if not text.isdigit():
            raise ValueError(f"thinking must be 'off', 'adaptive' or a token budget, not {value!r}")
        value = int(text)
    if isinstance(value, int):
        if value < MIN_BUDGET:
            raise ValueError(f"a thinking budget must be at least {MIN_BUDGET:,} tokens")
        if value > MAX_BUDGET:
            raise ValueError(f"a thinking budget must be at most {MAX_BUDGET:,} tokens")
        return value
    raise ValueError("thinking must be 'off', 'adaptive' or a token budget")


def thinking_param(model: str, setting: ThinkingSetting, max_tokens: int) -> dict[str, Any] | None:
    """The request's `thinking` parameter for `setting` on `model`, or None to send none
    (the model's own default). Never one the model's documentation says it rejects."""
    spec = spec_for(model)
    if setting is None:
        return None
    if setting == "off":
        if not spec.can_disable:
            log.info("thinking cannot be turned off on %s; it runs adaptive", model)
            return None
        return {"type": "disabled"} if spec.adaptive else None
    if not spec.budget and not spec.adaptive:
        return None  # a model without thinking
    if setting == "adaptive":
        if spec.adaptive:
            return {"type": "adaptive"}
        return _budget(DEFAULT_BUDGET, max_tokens)
    if not spec.budget:
        log.info("%s takes no thinking budget; thinking runs adaptive instead", model)
        return {"type": "adaptive"}
    return _budget(setting, max_tokens)


def _budget(budget: int, max_tokens: int) -> dict[str, Any] | None:
    """A budget below max_tokens, or None when max_tokens leaves no room for the minimum."""
    budget = min(budget, max_tokens - 1)
    if budget < MIN_BUDGET:
        return None
    return {"type": "enabled", "budget_tokens": budget}
