"""The model client: API payloads from a view, and the Anthropic adapter against a fake API."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from baton.core.conversation.messages import (
    ApiUsage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.errors import ApiError, ApiKeyMissing, PromptTooLong
from baton.core.model_api.client import AnthropicClient, partial_reply, to_api_messages
from baton.core.settings import Settings
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block, tool_use_block

KEY = "sk-ant-test-SECRET-123"  # what the anthropic_client fixture uses
MODEL = "claude-haiku-4-5"
MakeClient = Callable[..., AnthropicClient]
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def ask(client: AnthropicClient, sink: list[str] | None = None) -> Any:
    return await client.stream_reply(
        model=MODEL,
        system="be brief",
        messages=HELLO,
        tools=None,
        max_tokens=256,
        on_text=(sink.append if sink is not None else None),
    )


# ---- to_api_messages ---------------------------------------------------------------------


def tool_call(call_id: str, api_id: str, name: str = "Read") -> Message:
    return Message(
        role="assistant",
        content=[ToolUseBlock(id=call_id, name=name, input={"file_path": f"{call_id}.py"})],
        api_message_id=api_id,
        usage=ApiUsage(input_tokens=100, output_tokens=5),
    )


def tool_answer(call_id: str, content: Any = "file text") -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=call_id, content=content)])


def test_parallel_tool_call_records_become_one_assistant_turn_with_results_after_it() -> None:
    view = [
        text_message("user", "read both files"),
        tool_call("t1", "msg_A"),
        tool_answer("t1"),
        tool_call("t2", "msg_A"),
        tool_answer("t2", [{"type": "text", "text": "second"}]),
        text_message("user", "thanks"),
    ]
    payload = to_api_messages(view)
    assert [turn["role"] for turn in payload] == ["user", "assistant", "user"]
    assert [b["id"] for b in payload[1]["content"]] == ["t1", "t2"]
    user_turn = payload[2]["content"]
    assert [b["type"] for b in user_turn] == ["tool_result", "tool_result", "text"]
    assert user_turn[1]["content"] == [{"type": "text", "text": "second"}]  # kept as is
    assert user_turn[2]["text"] == "thanks"


def test_records_of_different_responses_stay_separate_turns() -> None:
    view = [
        text_message("user", "go"),
        tool_call("t1", "msg_A"),
        tool_answer("t1"),
        tool_call("t2", "msg_B"),
        tool_answer("t2"),
    ]
    payload = to_api_messages(view)
    assert [turn["role"] for turn in payload] == ["user", "assistant", "user", "assistant", "user"]


def test_consecutive_messages_of_one_role_merge_and_baton_fields_are_dropped() -> None:
    summary = text_message("user", "summary of earlier work", kind="summary", tokens=40)
    attachment = text_message("user", "restored file a.py", kind="attachment", pinned=True)
    prompt = text_message("user", "continue")
    payload = to_api_messages([summary, attachment, prompt])
    assert payload == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "summary of earlier work"},
                {"type": "text", "text": "restored file a.py"},
                {"type": "text", "text": "continue"},
            ],
        }
    ]


def test_signed_thinking_is_kept_and_unsigned_thinking_and_empty_text_are_dropped() -> None:
    reply = Message(
        role="assistant",
        content=[
            ThinkingBlock(thinking="plan", signature="sig-1"),
            ThinkingBlock(thinking="imported, no signature"),
            TextBlock(text="   "),
            TextBlock(text="answer", citations=None),
        ],
        api_message_id="msg_A",
    )
    payload = to_api_messages([text_message("user", "q"), reply])
    assert payload[1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
        {"type": "text", "text": "answer"},
    ]


def test_unknown_extra_block_fields_do_not_reach_the_api() -> None:
    message = Message.model_validate(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}, "bogus": 1}
            ],
        }
    )
    assert to_api_messages([message])[0]["content"] == [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    ]


# ---- streaming ---------------------------------------------------------------------------


async def test_streamed_reply_returns_blocks_usage_and_forwards_text_deltas(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    fake_anthropic.reply(
        "Hello there, this arrives in pieces.",
        usage={"input_tokens": 1200, "output_tokens": 9, "cache_read_input_tokens": 300},
        message_id="msg_fixed_1",
    )
    deltas: list[str] = []
    reply = await ask(anthropic_client(), deltas)
    assert reply.content == [TextBlock(text="Hello there, this arrives in pieces.")]
    assert len(deltas) > 1 and "".join(deltas) == "Hello there, this arrives in pieces."
    assert reply.usage == ApiUsage(input_tokens=1200, output_tokens=9, cache_read_input_tokens=300)
    assert (reply.stop_reason, reply.api_message_id, reply.model) == (
        "end_turn",
        "msg_fixed_1",
        MODEL,
    )
    [request] = fake_anthropic.message_requests()
    assert request.body["stream"] is True
    assert request.body["system"] == "be brief"
    assert request.body["messages"] == HELLO
    assert "tools" not in request.body
    assert request.api_key == KEY


async def test_tool_use_and_thinking_blocks_arrive_whole(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    call = tool_use_block("Read", {"file_path": "src/app.py", "limit": 40}, id="toolu_1")
    fake_anthropic.reply(thinking_block("I should read it", "sig-xyz"), "Reading.", call)
    reply = await ask(anthropic_client())
    assert reply.stop_reason == "tool_use"
    assert reply.content == [
        ThinkingBlock(thinking="I should read it", signature="sig-xyz"),
        TextBlock(text="Reading."),
        ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "src/app.py", "limit": 40}),
    ]


async def test_overloaded_529_is_retried_then_succeeds(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(529, "overloaded_error", "Overloaded", retry_after="0.01")
    fake_anthropic.reply("after the retry")
    reply = await ask(anthropic_client())
    assert reply.content == [TextBlock(text="after the retry")]
    assert len(fake_anthropic.message_requests()) == 2


async def test_rate_limit_429_waits_for_retry_after_then_retries(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="0.05")
    fake_anthropic.reply("ok now")
    reply = await ask(anthropic_client())
    assert reply.content == [TextBlock(text="ok now")]
    first, second = fake_anthropic.message_requests()
    # retry-after, not the SDK's own backoff (which starts at 0.375 s)
    assert 0.05 <= second.at - first.at < 0.375
    assert second.headers["x-stainless-retry-count"] == "1"


async def test_server_errors_until_give_up_raise_api_error(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(500, "api_error", "Internal server error", retry_after="0.01", times=3)
    with pytest.raises(ApiError) as caught:
        await ask(anthropic_client(max_retries=2))
    assert caught.value.data["status"] == 500
    assert caught.value.data["type"] == "api_error"
    assert "Internal server error" in caught.value.message
    assert partial_reply(caught.value) is None
    assert len(fake_anthropic.message_requests()) == 3


@pytest.mark.parametrize("status", [400, 413])
async def test_prompt_too_long_maps_to_prompt_too_long_with_figures(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient, status: int
) -> None:
    fake_anthropic.prompt_too_long(actual=215_432, limit=200_000, status=status)
    with pytest.raises(PromptTooLong) as caught:
        await ask(anthropic_client())
    assert (caught.value.actual, caught.value.limit) == (215_432, 200_000)
    assert caught.value.code == "prompt_too_long"


async def test_other_bad_requests_are_api_errors(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.error(400, "invalid_request_error", "messages: roles must alternate")
    with pytest.raises(ApiError) as caught:
        await ask(anthropic_client())
    assert caught.value.data == {"status": 400, "type": "invalid_request_error"}
    assert "roles must alternate" in caught.value.message


async def test_a_stream_cut_mid_reply_raises_with_the_partial_text(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    # events: message_start, ping, block start, then 8-char text deltas
    fake_anthropic.reply("The first part arrives, the rest never does.", cut_after=5)
    with pytest.raises(ApiError) as caught:
        await ask(anthropic_client())
    partial = partial_reply(caught.value)
    assert partial is not None
    assert partial.content == [TextBlock(text="The first part a")]
    assert caught.value.data["type"] == "stream_error"


async def test_a_stream_that_stalls_mid_reply_breaks_with_the_partial_text(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    """A reply that stops arriving past the read timeout: the stream broke (whether the
    SDK raises its own timeout error or its HTTP library's), the text so far is kept."""
    gate = threading.Event()  # never set: the reply hangs after its fifth event
    fake_anthropic.reply("Some words, then silence.", hold_after=5, gate=gate)
    try:
        with pytest.raises(ApiError) as caught:
            await ask(anthropic_client(timeout=0.5, max_retries=0))
    finally:
        gate.set()
    assert caught.value.data["type"] == "stream_error"
    partial = partial_reply(caught.value)
    assert partial is not None and partial.content == [TextBlock(text="Some words, then")]


async def test_an_api_that_cannot_be_reached_is_a_connection_error() -> None:
    """Before any reply began the failure is the connection's (`connection_error`); once
    it began, the stream's (`stream_error`, above), whichever way the SDK words it."""
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = AnthropicClient("sk-ant-test", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    try:
        with pytest.raises(ApiError) as caught:
            await ask(client)
    finally:
        await client.aclose()
    assert caught.value.data["type"] == "connection_error"
    assert partial_reply(caught.value) is None


async def test_a_stream_that_just_stops_is_a_broken_stream(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.reply("Complete sentence here.", cut_after=4, cut_clean=True)
    with pytest.raises(ApiError, match="ended before the response was complete") as caught:
        await ask(anthropic_client())
    partial = partial_reply(caught.value)
    assert partial is not None and partial.content == [TextBlock(text="Complete")]


async def test_an_error_event_mid_stream_keeps_the_partial(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.reply(
        "Some words first.", cut_after=4, stream_error=("overloaded_error", "Overloaded")
    )
    with pytest.raises(ApiError) as caught:
        await ask(anthropic_client())
    assert caught.value.data == {"status": None, "type": "overloaded_error"}
    partial = partial_reply(caught.value)
    assert partial is not None and partial.content == [TextBlock(text="Some wor")]


async def test_a_failing_text_callback_is_raised_as_it_is_with_the_partial(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    """Not the API's doing: the caller's own failure, not a broken stream."""
    fake_anthropic.reply("Some words first.")

    def on_text(text: str) -> None:
        raise LookupError("the client went away")

    with pytest.raises(LookupError) as caught:
        await anthropic_client().stream_reply(
            model=MODEL, system=None, messages=HELLO, tools=None, max_tokens=64, on_text=on_text
        )
    partial = partial_reply(caught.value)
    assert partial is not None and partial.content == [TextBlock(text="Some wor")]


async def test_an_unfinished_tool_call_is_not_part_of_a_partial_reply(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    call = tool_use_block("Bash", {"command": "pytest -q tests/unit"}, id="toolu_9")
    # message_start, ping, text start/delta/stop, tool start, one JSON delta, then cut
    fake_anthropic.reply("Running.", call, cut_after=7)
    with pytest.raises(ApiError) as caught:
        await ask(anthropic_client())
    partial = partial_reply(caught.value)
    assert partial is not None and partial.content == [TextBlock(text="Running.")]


async def test_cancelling_a_slow_stream_stops_it_and_keeps_the_partial(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    gate = threading.Event()  # never set: the stream stays held until the client leaves
    # events: message_start, ping, block start, one text delta; then it waits
    fake_anthropic.reply("Slow words, one piece at a time.", hold_after=4, gate=gate)
    first_text = asyncio.Event()

    def on_text(text: str) -> None:
        first_text.set()

    client = anthropic_client()
    task = asyncio.create_task(
        client.stream_reply(
            model=MODEL, system=None, messages=HELLO, tools=None, max_tokens=64, on_text=on_text
        )
    )
    await asyncio.wait_for(first_text.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await task
    partial = partial_reply(caught.value)
    assert partial is not None and partial.content == [TextBlock(text="Slow wor")]
    assert not gate.is_set()


async def test_no_key_means_api_key_missing_and_no_request(fake_anthropic: FakeAnthropic) -> None:
    client = AnthropicClient(None, base_url=fake_anthropic.base_url)
    assert not client.has_key
    with pytest.raises(ApiKeyMissing):
        await ask(client)
    assert fake_anthropic.requests == []
    assert await client.model_limits(MODEL) is None


async def test_the_key_comes_from_the_environment_and_the_url_from_settings(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # the setting must win
    client = AnthropicClient.from_settings(Settings(anthropic_base_url=fake_anthropic.base_url))
    await ask(client)
    await client.aclose()
    assert fake_anthropic.message_requests()[0].api_key == KEY


async def test_a_key_too_short_to_be_a_secret_leaves_error_texts_readable() -> None:
    """A placeholder key ("x", a stray space) is no secret worth taking out of every text:
    each of its letters in the error became [redacted], and the error was unreadable."""
    client = AnthropicClient(api_key="o", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(ApiError) as caught:
        await ask(client)
    await client.aclose()
    assert "[redacted]" not in caught.value.message
    assert "could not reach the Anthropic API: Connection" in caught.value.message


async def test_the_key_never_appears_in_errors_or_logs(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_anthropic.error(401, "authentication_error", f"invalid x-api-key {KEY}")
    with pytest.raises(ApiError) as caught:
        await ask(anthropic_client())
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.data)
    assert "[redacted]" in caught.value.message
    assert KEY not in repr(anthropic_client())
    assert caplog.records, "the SDK logs requests at DEBUG"
    assert all(KEY not in record.getMessage() for record in caplog.records)


async def test_model_limits_are_fetched_once_per_model(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.models["claude-test-1"] = {"max_input_tokens": 1_000_000, "max_tokens": 8_000}
    client = anthropic_client()
    first = await client.model_limits("claude-test-1")
    again = await client.model_limits("claude-test-1")
    assert first == again == {"max_input_tokens": 1_000_000, "max_tokens": 8_000}
    assert await client.model_limits("no-such-model") is None
    assert await client.model_limits("no-such-model") is None
    paths = [r.path for r in fake_anthropic.requests]
    assert paths == ["/v1/models/claude-test-1", "/v1/models/no-such-model"]


async def test_count_tokens_uses_the_api(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.count_tokens_result = 4321
    total = await anthropic_client().count_tokens(model=MODEL, system="s", messages=HELLO)
    assert total == 4321
    assert fake_anthropic.requests[0].path == "/v1/messages/count_tokens"


# ---- the fake itself, from synchronous code --------------------------------------------


def test_the_fake_serves_plain_json_replies_and_api_errors_to_sync_clients(
    fake_anthropic: FakeAnthropic,
) -> None:
    import anthropic

    fake_anthropic.reply("whole reply", usage={"input_tokens": 7, "output_tokens": 2})
    fake_anthropic.error(404, "not_found_error", "model: nope")
    sdk = anthropic.Anthropic(api_key=KEY, base_url=fake_anthropic.base_url, max_retries=0)
    try:
        message = sdk.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
        assert message.content[0].type == "text" and message.content[0].text == "whole reply"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 2)
        with pytest.raises(anthropic.NotFoundError) as caught:
            sdk.messages.create(model="nope", max_tokens=10, messages=HELLO)
        assert caught.value.body == {
            "type": "error",
            "error": {"type": "not_found_error", "message": "model: nope"},
        }
    finally:
        sdk.close()
    assert [r.body.get("stream") for r in fake_anthropic.message_requests()] == [None, None]
