"""Model prices per million tokens (input, output, cache write, cache read), by family.

Source: Anthropic's pricing page, https://docs.claude.com/en/docs/about-claude/pricing
(base input and output prices; a 5-minute cache write costs 1.25x the input price and a
cache read 0.1x). A model not in the table has no price: figures are then given in tokens
only. The longest matching prefix wins, as in `windows.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from baton.core.models.windows import longest_prefix, model_name

CACHE_WRITE_FACTOR = 1.25  # a 5-minute cache write, against the input price
CACHE_READ_FACTOR = 0.1


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float

    @property
    def cache_write(self) -> float:
        return self.input * CACHE_WRITE_FACTOR

    @property
    def cache_read(self) -> float:
        return self.input * CACHE_READ_FACTOR


PRICES: dict[str, Price] = {
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-3-5-sonnet": Price(3.0, 15.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-opus": Price(15.0, 75.0),
    "claude-3-haiku": Price(0.25, 1.25),
}


def price_of(model: str) -> Price | None:
    """The model's price, or None when the table does not know its family."""
    name, _ = model_name(model)
    best = longest_prefix(name, PRICES)
    return PRICES[best] if best else None


def dollars(tokens: int, per_million: float) -> float:
    return tokens * per_million / 1_000_000
