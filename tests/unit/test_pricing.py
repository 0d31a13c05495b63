"""Model prices by family (dated ids find theirs, unknown families have none) and what a
response's usage cost; the ACP meter's cost of a session's replies."""

from __future__ import annotations

import pytest

from baton.core.models.prices import cost_usd, price_of


@pytest.mark.parametrize(
    ("model", "input_price", "output_price"),
    [
        ("claude-sonnet-4-6", 3.0, 15.0),
        ("claude-sonnet-4-5", 3.0, 15.0),
        ("claude-sonnet-4-5-20250929", 3.0, 15.0),
        ("claude-opus-4-1-20250805", 15.0, 75.0),
        ("claude-opus-4-5", 5.0, 25.0),
        ("claude-haiku-4-5", 1.0, 5.0),
        ("claude-sonnet-4-20250514", 3.0, 15.0),
        ("claude-3-5-haiku-latest", 0.8, 4.0),
    ],
)
def test_known_families_have_their_price(
    model: str, input_price: float, output_price: float
) -> None:
    price = price_of(model)
    assert price is not None
    assert (price.input, price.output) == (input_price, output_price)


@pytest.mark.parametrize(
    "model", ["claude-sonnet-5-5", "claude-sonnet-4-7", "claude-opus-4-8", "gpt-9", ""]
)
def test_unknown_families_have_no_price(model: str) -> None:
    assert price_of(model) is None


def test_a_response_costs_its_tokens_at_their_rates() -> None:
    price = price_of("claude-sonnet-4-5")
    assert price is not None
    cost = cost_usd(
        price,
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_creation_input_tokens=200_000,
        cache_read_input_tokens=1_000_000,
    )
    assert cost == pytest.approx(3.0 + 1.5 + 0.75 + 0.3)
