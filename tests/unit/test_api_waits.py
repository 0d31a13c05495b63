"""The waits before a reply is asked again: made by Baton rather than inside the SDK, so
that each is told (what, how long, which attempt), as long as the API asked for (up to a
minute), for what the SDK would ask again."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from baton.core.errors import ApiError
from baton.core.model_api.client import AnthropicClient
from baton.core.model_api.stream_failures import mark_asked_again, retry_delay
from baton_testkit.fake_anthropic import FakeAnthropic

MODEL = "claude-sonnet-4-5"
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
MakeClient = Callable[..., AnthropicClient]


async def ask(client: AnthropicClient, told: list[str]) -> object:
    return await client.stream_reply(
        model=MODEL, system=None, messages=HELLO, tools=None, max_tokens=64, on_wait=told.append
    )


async def test_each_wait_is_told_with_its_reason_length_and_attempt(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
    fake_anthropic.error(500, "api_error", "Internal server error")
    fake_anthropic.reply("ok now")
    told: list[str] = []
    await ask(anthropic_client(), told)
    assert told == [
        "Rate limited by the API: trying again in 1 s (attempt 2 of 3)",
        "The API failed on its side: trying again in 1 s (attempt 3 of 3)",
    ]
    counts = [r.headers["x-stainless-retry-count"] for r in fake_anthropic.message_requests()]
    assert counts == ["0", "1", "2"]  # as the SDK numbers its own retries


async def test_what_the_sdk_does_not_retry_goes_through_untold(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(400, "invalid_request_error", "bad request")
    told: list[str] = []
    with pytest.raises(ApiError):
        await ask(anthropic_client(), told)
    assert told == []
    assert len(fake_anthropic.message_requests()) == 1


async def test_a_connection_that_fails_is_asked_again_and_told() -> None:
    with socket.socket() as free:  # a port nothing listens on once it is closed
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    client = AnthropicClient("sk-ant-test-0123456789abcdef", base_url=f"http://127.0.0.1:{port}")
    told: list[str] = []
    try:
        with pytest.raises(ApiError) as failed:
            await ask(client, told)
    finally:
        await client.aclose()
    assert failed.value.data["type"] == "connection_error"
    assert told == [
        "Could not reach the API: trying again in 1 s (attempt 2 of 3)",
        "Could not reach the API: trying again in 1 s (attempt 3 of 3)",
    ]


def test_the_wait_is_the_retry_after_asked_up_to_a_minute_else_the_backoff() -> None:
    def delay(after: float | None, retries: int = 0) -> float | None:
        error = ApiError("Anthropic API error 429", status=429, type="rate_limit_error")
        mark_asked_again(error, after)
        return retry_delay(error, None, retries, 2)

    assert delay(30) == 30
    assert delay(60) == 60
    assert delay(0.25) == 0.25
    assert 0.375 <= (delay(61) or 0) <= 0.5  # not a real wait: the SDK's backoff
    assert 0.375 <= (delay(None) or 0) <= 0.5
    assert 0.75 <= (delay(0, retries=1) or 0) <= 1.0
    assert delay(30, retries=2) is None  # the retries are spent
    unmarked = ApiError("Anthropic API error 429", status=429, type="rate_limit_error")
    assert retry_delay(unmarked, None, 0, 2) is None  # not an answer the SDK asks again
