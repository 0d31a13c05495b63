"""The tokens a model reads at most, as a request to it is fitted before it is sent."""

from __future__ import annotations

from typing import Protocol

from baton.core.models.windows import LONG_WINDOW, lookup_model


class Limits(Protocol):
    async def model_limits(self, model: str) -> dict[str, int] | None: ...


async def model_limits(client: Limits, model: str) -> dict[str, int] | None:
    """The Models API's figures for `model`, None when unknown or not to be had (they are
    a nicety: the model table still applies)."""
    try:
        return await client.model_limits(model)
    except Exception:
        return None


async def model_window(client: Limits, model: str) -> int | None:
    """The tokens `model` reads at most: the 1M-token variant's when its id names it, else
    the Models API's figure, else the table's; None for a model neither knows."""
    spec, long = lookup_model(model)
    if long:
        return LONG_WINDOW
    found = await model_limits(client, model)
    if found and found.get("max_input_tokens"):
        return int(found["max_input_tokens"])
    return spec.context_window if spec is not None else None
