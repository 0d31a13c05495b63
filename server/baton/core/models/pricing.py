"""Published per-token prices of known model families, and what a reply's usage cost."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens: input, output, cache writes and cache reads."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _standard(input_price: float, output_price: float) -> Price:
    # the API's rule: a 5-minute cache write costs 1.25 times input, a cache read a tenth
    return Price(input_price, output_price, input_price * 1.25, input_price * 0.1)


# Prefixes of model ids, as in windows.MODELS (the longest matching prefix wins). A family
# missing here has no known price: its cost is not reported rather than guessed.
PRICES: dict[str, Price] = {
    "claude-opus-4-5": _standard(5.0, 25.0),
    "claude-opus-4-1": _standard(15.0, 75.0),
    "claude-opus-4-0": _standard(15.0, 75.0),
    "claude-sonnet-4-5": _standard(3.0, 15.0),
    "claude-sonnet-4-0": _standard(3.0, 15.0),
    "claude-haiku-4-5": _standard(1.0, 5.0),
    "claude-3-7-sonnet": _standard(3.0, 15.0),
    "claude-3-5-sonnet": _standard(3.0, 15.0),
    "claude-3-5-haiku": _standard(0.8, 4.0),
    "claude-3-opus": _standard(15.0, 75.0),
    "claude-3-haiku": _standard(0.25, 1.25),
}
# "claude-opus-4" and "claude-sonnet-4" name the first 4-series models only when nothing
_FIRST_OF_SERIES = {"claude-opus-4": _standard(15.0, 75.0), "claude-sonnet-4": _standard(3.0, 15.0)}


def price_of(model: str) -> Price | None:
    """The price of `model`'s family, or None when it is not known."""
    name = model.strip().lower()
    found = [prefix for prefix in PRICES if name.startswith(prefix)]
    if found:
        return PRICES[max(found, key=len)]
    for prefix, price in _FIRST_OF_SERIES.items():
        rest = name[len(prefix) :]
        if name.startswith(prefix) and (rest == "" or rest.startswith("-2")):
            return price  # "claude-sonnet-4" or a dated id of it, never "claude-sonnet-4-6"
    return None


def cost_usd(
    price: Price,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
) -> float:
    """What one response with this usage cost, in US dollars."""
    total = (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_creation_input_tokens * price.cache_write
        + cache_read_input_tokens * price.cache_read
    )
    return total / 1_000_000
