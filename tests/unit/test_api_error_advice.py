"""An API failure says what happened and what to do about it (check the key, wait for a
rate limit or an overload, check the network, the timeout), in the error every surface
shows: the panel, the CLI and ACP take its message as it is."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from baton.core.errors import ApiError
from baton.core.model_api.client import AnthropicClient
from baton_testkit.fake_anthropic import FakeAnthropic

KEY_REFUSED = "Check the Anthropic API key (set a valid one), then try again."
NOT_ALLOWED = "The API key may not use this model or feature: check the key's access."
NO_MODEL = (
    "Check the model's name (the model setting, or pick another model), and the API's "
    "address (anthropicBaseUrl or ANTHROPIC_BASE_URL) when one is set."
)
MakeClient = Callable[..., AnthropicClient]
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def failure(client: AnthropicClient) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await client.stream_reply(
            model="claude-haiku-4-5", system=None, messages=HELLO, tools=None, max_tokens=64
        )
    return caught.value


@pytest.mark.parametrize(
    ("status", "kind", "headers", "said"),
    [
        (401, "authentication_error", {}, KEY_REFUSED),
        (403, "permission_error", {}, NOT_ALLOWED),
        (404, "not_found_error", {}, NO_MODEL),
        (429, "rate_limit_error", {"retry_after": "7"}, "Rate limited: try again in 7 seconds."),
        (429, "rate_limit_error", {"retry_after": "1"}, "Rate limited: try again in 1 second."),
        (429, "rate_limit_error", {}, "Rate limited: try again in a minute."),
        (529, "overloaded_error", {}, "The API is overloaded: try again in a few minutes."),
        (500, "api_error", {}, "The API failed on its side: try again in a moment."),
    ],
)
async def test_an_api_error_says_what_to_do(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    status: int,
    kind: str,
    headers: dict[str, Any],
    said: str,
) -> None:
    fake_anthropic.error(status, kind, "the API's own words", **headers)
    error = await failure(anthropic_client(max_retries=0))
    assert error.message.startswith(f"Anthropic API error {status} ({kind}): the API's own words. ")
    assert error.message.endswith(said)
    assert error.data == {"status": status, "type": kind}


async def test_a_bad_request_is_said_in_the_apis_words_alone(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(400, "invalid_request_error", "messages: roles must alternate")
    error = await failure(anthropic_client())
    assert error.message == (
        "Anthropic API error 400 (invalid_request_error): messages: roles must alternate"
    )


async def test_an_api_that_cannot_be_reached_says_to_check_the_network() -> None:
    client = AnthropicClient("sk-ant-test-0123456789", base_url="http://127.0.0.1:9", max_retries=0)
    try:
        error = await failure(client)
    finally:
        await client.aclose()
    assert error.message.startswith("could not reach the Anthropic API: ")
    assert error.message.endswith(
        "Check the network connection (and anthropicBaseUrl or ANTHROPIC_BASE_URL, when set), "
        "then try again."
    )


async def test_a_reply_that_stalls_past_the_timeout_says_so_and_names_the_setting(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    """It said "the reply stream broke: ReadTimeout: " and nothing more."""
    gate = threading.Event()  # never set while the request waits: the fake stalls
    fake_anthropic.reply("too late", hold_after=0, gate=gate)
    try:
        error = await failure(anthropic_client(timeout=0.5))
    finally:
        gate.set()
    assert error.message == (
        "the reply stream broke: the Anthropic API sent nothing more within the timeout "
        "(ReadTimeout). Try again; BATON_API_TIMEOUT sets how long a request may take "
        "(default 600 s)."
    )


@pytest.mark.parametrize(
    "given", ["sk-ant-test-0123456789\n", "sk-ant-test-0123456789\r\n", " sk-ant-test-0123456789"]
)
async def test_a_key_with_white_space_around_it_is_sent_without_it(
    fake_anthropic: FakeAnthropic, given: str
) -> None:
    """A key read with the line break of its file failed every request as "could not reach
    the Anthropic API: ... LocalProtocolError. Check the network connection"."""
    fake_anthropic.reply("Hello.")
    client = AnthropicClient(given, base_url=fake_anthropic.base_url, max_retries=0)
    try:
        await client.stream_reply(
            model="claude-haiku-4-5", system=None, messages=HELLO, tools=None, max_tokens=64
        )
    finally:
        await client.aclose()
    assert fake_anthropic.message_requests()[0].api_key == "sk-ant-test-0123456789"


def test_a_key_of_white_space_alone_is_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", " \n")
    assert not AnthropicClient(None).has_key


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("sk-ant-test-01234\n56789", "a line break"),
        ("sk-ant-test-01234\t56789", "a control character"),
        ("sk-ant-test-01234\u00e956789", "a character that is not ASCII"),
        ("sk-ant-test-01234\u201356789", "a character that is not ASCII"),
    ],
)
async def test_a_key_no_header_can_carry_is_said_so_and_never_sent(
    fake_anthropic: FakeAnthropic, given: str, named: str
) -> None:
    """A key with a line break inside it (two keys pasted, a wrapped line) failed every
    request as "could not reach the Anthropic API: ... LocalProtocolError. Check the network
    connection"; one with a typographic dash pasted from a page, as a UnicodeEncodeError."""
    fake_anthropic.reply("Hello.")
    client = AnthropicClient(given, base_url=fake_anthropic.base_url, max_retries=0)
    try:
        error = await failure(client)
    finally:
        await client.aclose()
    assert error.message == (
        f"the Anthropic API key cannot be sent: it holds {named} inside it. {KEY_REFUSED}"
    )
    assert given not in error.message and "56789" not in error.message
    assert fake_anthropic.message_requests() == []
