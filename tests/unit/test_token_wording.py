"""Token figures as the meter writes them."""

from __future__ import annotations

import pytest

from baton.core.usage.wording import format_tokens


@pytest.mark.parametrize(
    ("tokens", "shown"),
    [
        (950, "950"),
        (999, "999"),
        (1_000, "1K"),
        (9_949, "9.9K"),
        (9_950, "10K"),  # rounded, not cut to "9.9K"
        (15_250, "15.3K"),
        (99_950, "100K"),
        (124_500, "125K"),
        (12_345, "12.3K"),
        (124_300, "124K"),
        (999_499, "999K"),
        (999_500, "1M"),  # read "1000K" of "1M"
        (999_600, "1M"),
        (1_000_000, "1M"),
        (1_250_000, "1.3M"),  # half up, as every other figure
        (9_950_000, "10M"),
        (12_400_000, "12M"),
        (999_999_999, "1000M"),
    ],
)
def test_a_figure_reads_in_the_unit_it_rounds_to(tokens: int, shown: str) -> None:
    assert format_tokens(tokens) == shown
