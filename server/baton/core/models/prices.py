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
    "claude-opus-4-6": Price(5.0, 25.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-4-6": Price(3.0, 15.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-3-5-sonnet": Price(3.0, 15.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-opus": Price(15.0, 75.0),
    "claude-3-haiku": Price(0.25, 1.25),
}


# "claude-opus-4" and "claude-sonnet-4" name the first models of the series only: bare or
# dated ("claude-sonnet-4-20250514"), never a later one the table does not know yet
_FIRST_OF_SERIES = frozenset({"claude-opus-4", "claude-sonnet-4"})


def price_of(model: str) -> Price | None:
    """The model's price, or None when the table does not know its family (a cost is then
    not reported rather than guessed)."""
    name, _ = model_name(model)
    best = longest_prefix(name, PRICES)
    if best in _FIRST_OF_SERIES and not (name == best or name[len(best) :].startswith("-2")):
        return None
    return PRICES[best] if best else None


def cost_usd(
    price: Price,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
) -> float:
    """What one response with this usage cost, in US dollars."""
    return (
        dollars(input_tokens, price.input)
        + dollars(output_tokens, price.output)
        + dollars(cache_creation_input_tokens, price.cache_write)
        + dollars(cache_read_input_tokens, price.cache_read)
    )


def dollars(tokens: int, per_million: float) -> float:
    return tokens * per_million / 1_000_000
