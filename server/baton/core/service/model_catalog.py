"""The models a model picker offers: the Models API's list, or the configured one without
a key (or when the API fails), each with the context window the budget would use."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import Field

from baton.core.conversation.wire_model import WireModel
from baton.core.model_api.model_list import ListedModel
from baton.core.models.windows import ModelLimits, lookup_model
from baton.core.settings import Settings
from baton.core.usage.budget import budget_for

WindowFrom = Literal["api", "table", "setting", "assumed"]


class ModelOption(WireModel):
    """One model to choose: its id, the name to show and the window the meter would use
    with it (`windowFrom`: the Models API, Baton's model table, the `contextWindow`
    setting, or assumed for a model neither knows)."""

    id: str
    display_name: str
    context_window: int
    max_output: int
    window_from: WindowFrom
    current: bool = Field(default=False, description="the session's model (when one is named)")


class ModelCatalog(WireModel):
    """The models to choose from; `source` says where the list came from and `reason`,
    for the configured list, why the Models API was not used."""

    models: list[ModelOption]
    source: Literal["api", "configured"]
    reason: str | None = None
    current: str | None = Field(default=None, description="the session's model, if one is named")


def option(
    model_id: str, display_name: str, settings: Settings, limits: ModelLimits
) -> ModelOption:
    """`model_id` with the window and output cap its budget would have (`budget_for`)."""
    budget, guessed = budget_for(model_id, settings, limits)
    spec, long = lookup_model(model_id)
    window_from: WindowFrom = "table"
    if settings.context_window:
        window_from = "setting"
    elif limits.max_input_tokens and not long:
        window_from = "api"
    elif guessed is not None or (spec is None and not long):
        window_from = "assumed"
    return ModelOption(
        id=model_id,
        display_name=display_name or model_id,
        context_window=budget.context_window,
        max_output=budget.max_output,
        window_from=window_from,
    )


def from_api(
    listed: Sequence[ListedModel], settings: Settings, current: str | None
) -> ModelCatalog:
    options = [
        option(m.id, m.display_name, settings, ModelLimits(m.max_input_tokens, m.max_tokens))
        for m in listed
    ]
    return _marked(options, "api", None, settings, current)


def configured(settings: Settings, current: str | None, reason: str) -> ModelCatalog:
    """The `models` setting (then the `model` setting), each once, with the table's windows."""
    options = [
        option(m, m, settings, ModelLimits()) for m in _unique([*settings.models, settings.model])
    ]
    return _marked(options, "configured", reason, settings, current)


def _marked(
    options: list[ModelOption],
    source: Literal["api", "configured"],
    reason: str | None,
    settings: Settings,
    current: str | None,
) -> ModelCatalog:
    """The session's model marked current; one no list names is added first (it is in use)."""
    if current and not any(o.id == current for o in options):
        options.insert(0, option(current, current, settings, ModelLimits()))
    for o in options:
        o.current = o.id == current
    return ModelCatalog(models=options, source=source, reason=reason, current=current or None)


def _unique(ids: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for model_id in ids:
        if model_id.strip():
            seen.setdefault(model_id.strip(), None)
    return list(seen)
