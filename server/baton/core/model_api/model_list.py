"""The Models API's list of models (`GET /v1/models`, every page), through the SDK."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anthropic

LIST_TIMEOUT = 10.0  # seconds the list may take (it is asked for when a picker opens)
MAX_MODELS = 500  # pages stop after this many models


@dataclass(frozen=True)
class ListedModel:
    """One model as the Models API lists it; a figure it does not give is None."""

    id: str
    display_name: str
    max_input_tokens: int | None = None
    max_tokens: int | None = None


def _figure(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return value if ok and isinstance(value, int) else None


async def list_models(sdk: anthropic.AsyncAnthropic) -> list[ListedModel]:
    """Every model the API lists, newest first as it lists them; the SDK's errors go up.
    Asked once: a retry would sit out the API's retry-after with the picker waiting unsaid,
    where a failure gives the configured list at once (and is asked again next time)."""
    client = sdk.with_options(max_retries=0, timeout=LIST_TIMEOUT)
    out: list[ListedModel] = []
    async for info in client.models.list(limit=100):
        if not isinstance(info.id, str) or not info.id:
            continue
        out.append(
            ListedModel(
                id=info.id,
                display_name=str(getattr(info, "display_name", "") or info.id),
                max_input_tokens=_figure(getattr(info, "max_input_tokens", None)),
                max_tokens=_figure(getattr(info, "max_tokens", None)),
            )
        )
        if len(out) >= MAX_MODELS:
            break
    return out
