"""The Models API lookups (a model's limits, whether it lists compaction) are niceties with
a fallback (the model table; Baton's own summary): asked once, they never sit out a
`retry-after` before the send or the compaction that needs them, which would wait unsaid."""

from __future__ import annotations

from collections.abc import Callable

from baton.core.model_api.client import AnthropicClient
from baton_testkit.fake_anthropic import FakeAnthropic, ScriptedError

MakeClient = Callable[..., AnthropicClient]
LISTED = "claude-sonnet-4-6"  # the fake's Models API gives its limits and lists compaction


def lookups(fake: FakeAnthropic, model: str) -> int:
    return sum(1 for r in fake.requests if r.path.split("?")[0] == f"/v1/models/{model}")


def rate_limited(fake: FakeAnthropic) -> None:
    fake.model_errors.append(ScriptedError(429, "rate_limit_error", "slow down", "2"))


async def test_a_rate_limited_limits_lookup_falls_back_at_once(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    """The SDK asked again after the retry-after, unsaid, before the send's reply."""
    rate_limited(fake_anthropic)
    assert await anthropic_client().model_limits(LISTED) is None  # the table's, then
    assert lookups(fake_anthropic, LISTED) == 1


async def test_a_rate_limited_compaction_lookup_falls_back_at_once(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    rate_limited(fake_anthropic)
    assert await anthropic_client().compaction_supported(LISTED) is None
    assert lookups(fake_anthropic, LISTED) == 1


async def test_an_answered_lookup_gives_the_apis_figures(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    client = anthropic_client()
    assert await client.model_limits(LISTED) == {"max_input_tokens": 200_000, "max_tokens": 64_000}
    assert await client.compaction_supported(LISTED) is True
