"""The wait the API asks for (`retry-after-ms`, `retry-after` in seconds or as an HTTP
date) is read in one place: the wait before asking again and the advice the error quotes
once the retries are spent tell the same number, whatever form the API used."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable

import pytest

from baton.core.errors import ApiError
from baton.core.model_api.api_errors import asked_for
from baton.core.model_api.client import AnthropicClient
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def in_seconds(seconds: int) -> str:
    return email.utils.formatdate(time.time() + seconds, usegmt=True)


@pytest.mark.parametrize(
    ("headers", "asked"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "2500"}, 2.5),
        ({"retry-after-ms": "2500", "retry-after": "9"}, 2.5),  # the finer one first
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "-5"}, -5.0),
        ({"retry-after": "1e9"}, 1e9),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_the_wait_asked_for_is_read_in_each_form(headers: dict[str, str], asked: float) -> None:
    assert asked_for(headers) == asked


def test_a_retry_after_given_as_a_date_is_the_seconds_until_it() -> None:
    assert 28 <= (asked_for({"retry-after": in_seconds(30)}) or 0) <= 30
    assert (asked_for({"retry-after": in_seconds(-30)}) or 0) < 0


async def advice(client: AnthropicClient, told: list[str]) -> str:
    with pytest.raises(ApiError) as caught:
        await client.stream_reply(
            model="claude-haiku-4-5",
            system=None,
            messages=HELLO,
            tools=None,
            max_tokens=64,
            on_wait=told.append,
        )
    return caught.value.message.rsplit(". ", 1)[1]


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({"retry_after_ms": "2500"}, "Rate limited: try again in 3 seconds."),
        ({"retry_after": "2.5"}, "Rate limited: try again in 3 seconds."),
        ({"retry_after": "0.2"}, "Rate limited: try again in 1 second."),
        ({"retry_after": "soon"}, "Rate limited: try again in a minute."),
        ({"retry_after": "-5"}, "Rate limited: try again in a minute."),
        ({"retry_after": "1e9"}, "Rate limited: try again in a minute."),
        ({"retry_after": "nan"}, "Rate limited: try again in a minute."),
    ],
)
async def test_the_advice_quotes_the_wait_asked_for_in_any_form(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient, headers: dict[str, str], said: str
) -> None:
    """A `retry-after-ms` was waited but not quoted ("in a minute"), and 2.5 seconds were
    quoted as 2 where the wait said 3."""
    fake_anthropic.error(429, "rate_limit_error", "slow down", **headers)
    assert await advice(anthropic_client(max_retries=0), []) == said


async def test_a_retry_after_given_as_a_date_is_quoted(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after=in_seconds(120))
    said = await advice(anthropic_client(max_retries=0), [])
    seconds = int(said.removeprefix("Rate limited: try again in ").removesuffix(" seconds."))
    assert 118 <= seconds <= 120


async def test_the_wait_told_and_the_advice_after_it_tell_the_same_seconds(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after_ms="1200", times=2)
    told: list[str] = []
    said = await advice(anthropic_client(max_retries=1), told)
    seconds = math.ceil(1.2)
    assert told == [f"Rate limited by the API: trying again in {seconds} s (attempt 2 of 2)"]
    assert said == f"Rate limited: try again in {seconds} seconds."
