"""Token figures as the meter writes them."""

from __future__ import annotations

import pytest

from baton.core.usage.budget import Breakdown
from baton.core.usage.wording import format_tokens
from baton_testkit.usage_figures import sonnet_usage


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


def test_a_context_past_its_window_says_how_far_past_not_100_percent() -> None:
    usage = sonnet_usage(
        250_000,
        percent_used=100,  # the wire's figure stops at 100
        percent_left=0,
        state="blocking",
        breakdown=Breakdown(messages=250_000),
    ).worded()
    assert usage.text.meter == "~125% 250K/200K"  # estimated: "~" first
    assert usage.text.panel.startswith("125% used · 250K/200K est.")
    assert usage.text.headline.startswith("Context 125% used (250,000 / 200,000, estimated")
    assert usage.percent_used == 100


def test_a_share_half_way_between_two_percents_rounds_up_as_every_figure_does() -> None:
    """62.5% reads "63%" in the meter, the headline and the panel, as the client rounds the
    same `percentUsed` (Math.round) in its tooltip and its draft line, and as token figures
    round; formatting alone rounded it to the even "62%"."""
    usage = sonnet_usage(
        125_000,
        percent_used=62.5,
        percent_left=25,
        estimated=False,
        breakdown=Breakdown(messages=125_000, free=75_000),
        basis="api",
    ).worded()
    assert usage.text.meter == "63% 125K/200K"
    assert usage.text.headline.startswith("Context 63% used (125,000 / 200,000)")
    assert usage.text.panel.startswith("63% used · 125K/200K")
