"""Sending a turn: prompt, auto-compact, blocking limit, streamed reply, failures, cancelling."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import ApiUsage, MessageInput, TextBlock, ToolResultBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import ApiError, ApiKeyMissing, InvalidParams, PromptTooLong
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block, tool_use_block

KEY = "sk-ant-test-SECRET-123"  # what the anthropic_client fixture uses
MODEL = "claude-haiku-4-5"
MakeClient = Callable[..., AnthropicClient]


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("chat test", MODEL, "You are a careful assistant.")


def context(
    client: AnthropicClient | None,
    estimator: Estimator,
    settings: Settings | None = None,
    deltas: list[tuple[str, str]] | None = None,
    **fields: Any,
) -> ChatContext:
    def on_delta(message_id: str, text: str) -> None:
        if deltas is not None:
            deltas.append((message_id, text))

    return ChatContext(
        settings=settings or Settings(),
        estimator=estimator,
        client=client,
        on_delta=on_delta,
        **fields,
    )


def words(count: int, word: str = "lorem") -> str:
    return " ".join(f"{word}{i % 10}" for i in range(count))


def near_the_threshold(
    session: Session, estimator: Estimator, client: AnthropicClient, **fields: Any
) -> ChatContext:
    """Six long turns in a 20,000-token window (threshold 13,400, blocking 15,400): the
    turn's context, auto-compacting with the extractive summarizer."""
    settings = Settings(
        context_window=20_000,
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=2_000),
    )
    for turn in range(6):
        session.append(
            [
                MessageInput(role="user", content=f"step {turn}: " + words(1_200)),
                MessageInput(role="assistant", content=f"did step {turn}: " + words(1_200)),
            ]
        )

    def compact_context() -> CompactContext:
        return CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))

    return context(
        client,
        estimator,
        settings,
        auto=AutoCompactor(compact_context),
        compact_context=compact_context,
        **fields,
    )


def transcript_lines(session: Session) -> list[str]:
    return Path(session.transcript.path).read_text().splitlines()


async def test_a_turn_appends_prompt_and_reply_and_streams_deltas_under_the_reply_id(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.reply(
        "Hello! How can I help today?",
        usage={"input_tokens": 1500, "output_tokens": 12},
        message_id="msg_api_1",
    )
    deltas: list[tuple[str, str]] = []
    result = await send(
        session,
        content="Hi there",
        tools=None,
        ctx=context(anthropic_client(), estimator, None, deltas),
    )
    reply = result.message
    assert [m.role for m in session.view_messages()] == ["user", "assistant"]
    assert session.view_messages()[0].text() == "Hi there"
    assert reply.content == [TextBlock(text="Hello! How can I help today?")]
    assert (reply.api_message_id, reply.model, reply.stop_reason) == (
        "msg_api_1",
        MODEL,
        "end_turn",
    )
    assert reply.usage == ApiUsage(input_tokens=1500, output_tokens=12)
    assert {mid for mid, _ in deltas} == {reply.id}
    assert "".join(text for _, text in deltas) == "Hello! How can I help today?"
    # the count now anchors on the real usage
    assert not result.usage.estimated and result.usage.used_tokens == 1512
    request = fake_anthropic.message_requests()[0].body
    assert request["system"] == "You are a careful assistant."
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi there"}]}
    ]
    stored = [json.loads(line) for line in transcript_lines(session)]
    kept = [e["message"] for e in stored if e["type"] == "message"]
    assert kept[-1]["id"] == reply.id and kept[-1]["stopReason"] == "end_turn"


async def test_real_usage_calibrates_the_estimator(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    prompt = words(2_000)
    estimate = estimator.count_text(prompt)
    fake_anthropic.reply("ok", usage={"input_tokens": estimate * 2, "output_tokens": 1})
    await send(session, content=prompt, tools=None, ctx=context(anthropic_client(), estimator))
    assert estimator.observations == 1
    assert estimator.factor > 1.0


async def test_tool_use_reply_is_returned_and_tool_results_continue_the_turn(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    tools = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]
    call = tool_use_block("Read", {"file_path": "src/app.py"}, id="toolu_1")
    fake_anthropic.reply("Let me look.", call, usage={"input_tokens": 900, "output_tokens": 30})
    fake_anthropic.reply(
        "The file defines main().", usage={"input_tokens": 990, "output_tokens": 9}
    )
    ctx = context(anthropic_client(), estimator)

    first = await send(session, content="What is in app.py?", tools=tools, ctx=ctx)
    assert first.message.stop_reason == "tool_use"
    assert [u.id for u in first.message.tool_uses()] == ["toolu_1"]
    result = ToolResultBlock(tool_use_id="toolu_1", content="def main(): ...")
    session.append([MessageInput(role="user", content=[result])])
    second = await send(session, content=None, tools=tools, ctx=ctx)

    assert second.message.text() == "The file defines main()."
    body = fake_anthropic.message_requests()[1].body
    assert body["tools"] == tools
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][1]["type"] == "tool_use"
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "def main(): ..."}
    ]


async def test_a_new_prompt_after_an_unanswered_tool_call_sends_a_repaired_conversation(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.reply(tool_use_block("Bash", {"command": "ls"}, id="toolu_7"))
    fake_anthropic.reply("Sure, something else then.")
    ctx = context(anthropic_client(), estimator)
    await send(session, content="list files", tools=None, ctx=ctx)
    await send(session, content="never mind", tools=None, ctx=ctx)
    last_user = fake_anthropic.message_requests()[1].body["messages"][-1]["content"]
    assert last_user[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_7",
        "content": "interrupted",
        "is_error": True,
    }
    assert last_user[1] == {"type": "text", "text": "never mind"}


async def test_continuing_needs_a_user_message_at_the_end(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    ctx = context(anthropic_client(), estimator)
    with pytest.raises(InvalidParams, match="nothing to continue"):
        await send(session, content=None, tools=None, ctx=ctx)
    await send(session, content="hello", tools=None, ctx=ctx)
    before = transcript_lines(session)
    with pytest.raises(InvalidParams, match="nothing to continue"):
        await send(session, content=None, tools=None, ctx=ctx)
    assert transcript_lines(session) == before
    assert len(fake_anthropic.message_requests()) == 1


@pytest.mark.parametrize("content", ["", "   ", []])
async def test_empty_content_is_refused_and_changes_nothing(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    content: Any,
) -> None:
    before = transcript_lines(session)
    with pytest.raises(InvalidParams):
        await send(session, content=content, tools=None, ctx=context(anthropic_client(), estimator))
    assert transcript_lines(session) == before and fake_anthropic.requests == []


async def test_without_a_client_send_is_api_key_missing_and_changes_nothing(
    session: Session, estimator: Estimator
) -> None:
    before = transcript_lines(session)
    with pytest.raises(ApiKeyMissing):
        await send(session, content="hello", tools=None, ctx=context(None, estimator))
    assert transcript_lines(session) == before


async def test_an_api_failure_keeps_the_prompt_but_appends_no_reply(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.error(500, "api_error", "Internal server error", retry_after="0.01", times=3)
    ctx = context(anthropic_client(), estimator)
    with pytest.raises(ApiError) as caught:
        await send(session, content="please help", tools=None, ctx=ctx)
    view = session.view_messages()
    assert [m.role for m in view] == ["user"]
    assert caught.value.data["promptMessageId"] == view[0].id
    assert len(fake_anthropic.message_requests()) == 3  # the SDK retried twice
    # the client retries by continuing: the prompt is not sent twice
    result = await send(session, content=None, tools=None, ctx=ctx)
    assert [m.role for m in session.view_messages()] == ["user", "assistant"]
    assert result.message.text() == "OK"


async def test_a_stream_cut_mid_reply_keeps_the_partial_reply_as_interrupted(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.reply("Here is the first half and then", cut_after=5)
    deltas: list[tuple[str, str]] = []
    with pytest.raises(ApiError):
        await send(
            session,
            content="explain",
            tools=None,
            ctx=context(anthropic_client(), estimator, None, deltas),
        )
    kept = session.view_messages()[-1]
    assert kept.role == "assistant" and kept.stop_reason == "interrupted"
    assert kept.text() == "Here is the firs"
    assert kept.usage is None  # a cut reply's usage would not describe what was kept
    assert {mid for mid, _ in deltas} == {kept.id}


async def test_a_stream_cut_after_its_thinking_appends_nothing_and_send_retries(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    # message_start, ping, the thinking block (start, 2 deltas, signature, stop): then cut,
    # three times (a break before any text is asked again as often as the client retries)
    for _ in range(3):
        fake_anthropic.reply(thinking_block("Let me think."), "Here is my answer.", cut_after=7)
    ctx = context(anthropic_client(), estimator)
    with pytest.raises(ApiError) as caught:
        await send(session, content="think first", tools=None, ctx=ctx)
    # no text arrived: as for a reply that failed before any, nothing is appended
    assert [m.role for m in session.view_messages()] == ["user"]
    assert caught.value.data["promptMessageId"] == session.view[-1]
    result = await send(session, content=None, tools=None, ctx=ctx)  # the documented retry
    assert result.message.text() == "OK"


async def test_a_stream_the_sdk_cannot_read_is_a_clean_error_that_keeps_what_arrived(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a proxy that sends no usage: the SDK fails on its message_delta (AttributeError)
    fake_anthropic.reply("All of the answer.", no_usage=True)
    ctx = context(anthropic_client(), estimator)
    with caplog.at_level(logging.DEBUG), pytest.raises(ApiError) as caught:
        await send(session, content="answer me", tools=None, ctx=ctx)
    assert caught.value.data["type"] == "stream_error"
    assert caught.value.message.startswith("the reply stream broke: AttributeError")
    assert caught.value.data["promptMessageId"] == session.view[0]
    kept = session.view_messages()[-1]
    assert (kept.text(), kept.stop_reason) == ("All of the answer.", "interrupted")
    assert not any(r.exc_info for r in caplog.records)  # no traceback logged
    fake_anthropic.reply("Again, whole.")
    assert (await send(session, content="again", tools=None, ctx=ctx)).message.text()


async def test_cancelling_a_slow_reply_keeps_what_arrived_as_interrupted(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.reply("Slow words, one piece at a time.", hold_after=4, gate=threading.Event())
    arrived = asyncio.Event()
    ids: list[str] = []

    def on_delta(message_id: str, text: str) -> None:
        ids.append(message_id)
        arrived.set()

    ctx = context(anthropic_client(), estimator)
    ctx.on_delta = on_delta
    task = asyncio.create_task(send(session, content="go slowly", tools=None, ctx=ctx))
    await asyncio.wait_for(arrived.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    kept = session.view_messages()[-1]
    assert (kept.id, kept.text(), kept.stop_reason) == (ids[0], "Slow wor", "interrupted")
    # the session is free again: a new prompt goes through
    fake_anthropic.reply("Back again.")
    result = await send(
        session, content="again", tools=None, ctx=context(anthropic_client(), estimator)
    )
    assert result.message.text() == "Back again."


async def test_a_second_send_while_a_reply_streams_is_refused(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.reply("Slow.", hold_after=3, gate=threading.Event())
    ctx = context(anthropic_client(), estimator)
    task = asyncio.create_task(send(session, content="first", tools=None, ctx=ctx))
    while not fake_anthropic.message_requests():
        await asyncio.sleep(0)  # yield until the first request is on the wire
    before = transcript_lines(session)
    with pytest.raises(InvalidParams, match="already streaming"):
        await send(session, content="second", tools=None, ctx=ctx)
    assert transcript_lines(session) == before
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_over_the_blocking_limit_send_refuses_without_calling_the_model(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    settings = Settings(context_window=4_000)  # blocking limit 3,080
    with pytest.raises(PromptTooLong) as caught:
        await send(
            session,
            content=words(3_000),
            tools=None,
            ctx=context(anthropic_client(), estimator, settings),
        )
    assert "Compact the conversation" in caught.value.message
    assert caught.value.limit == 3_080 and caught.value.actual is not None
    assert caught.value.actual >= 3_080
    assert fake_anthropic.message_requests() == []
    assert caught.value.data["promptMessageId"] == session.view[-1]


async def test_auto_compact_gets_its_chance_before_the_blocking_check(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    ctx = near_the_threshold(session, estimator, anthropic_client())
    result = await send(session, content="and the next step?", tools=None, ctx=ctx)

    assert result.message.text() == "OK"
    assert session.compactions == 1
    boundary = session.boundaries[session.active[-1]]
    assert (boundary.trigger, boundary.direction) == ("auto", "all")
    sent = fake_anthropic.message_requests()[0].body["messages"]
    assert sent[0]["content"][0]["text"].startswith("This session continues")
    assert sent[-1]["content"][-1]["text"] == "and the next step?"


async def test_the_prompt_and_an_auto_compaction_are_steps_before_the_model_is_asked(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    steps: list[tuple[str, int, int]] = []  # (last text in the view, compactions, requests)

    def on_step() -> None:
        last = session.view_messages()[-1].text()
        steps.append((last, session.compactions, len(fake_anthropic.message_requests())))

    ctx = near_the_threshold(session, estimator, anthropic_client(), on_step=on_step)
    await send(session, content="next?", tools=None, ctx=ctx)
    assert steps == [("next?", 0, 0), ("next?", 1, 0)]  # each before the model was asked


async def test_prompt_too_long_from_the_api_gives_advice_and_calibrates(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.prompt_too_long(actual=250_000, limit=200_000)
    with pytest.raises(PromptTooLong) as caught:
        await send(
            session, content=words(3_000), tools=None, ctx=context(anthropic_client(), estimator)
        )
    assert (caught.value.actual, caught.value.limit) == (250_000, 200_000)
    assert "Compact the conversation" in caught.value.message
    assert estimator.observations == 1 and estimator.factor > 1.0
    assert [m.role for m in session.view_messages()] == ["user"]


async def test_an_output_cap_that_does_not_fit_beside_the_prompt_is_lowered_and_sent_again(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    # models before Claude 4.5 refuse a request whose prompt and max_tokens pass the window;
    # the room Baton gives the reply is the window less its estimate, which may be short
    session.set_meta(model="claude-opus-4-1")
    fake_anthropic.error(
        400,
        "invalid_request_error",
        "input length and `max_tokens` exceed context limit: 188240 + 32000 > 200000, "
        "decrease input length or `max_tokens` and try again",
    )
    fake_anthropic.reply("It fits now.")
    settings = Settings(thinking=16_000)
    result = await send(
        session, content="go on", tools=None, ctx=context(anthropic_client(), estimator, settings)
    )

    assert result.message.text() == "It fits now."
    first, second = (r.body for r in fake_anthropic.message_requests())
    assert first["max_tokens"] == 32_000
    assert second["max_tokens"] == 200_000 - 188_240  # what fits beside the prompt
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 11_759}
    assert second["messages"] == first["messages"]
    assert [m.role for m in session.view_messages()] == ["user", "assistant"]


async def test_the_api_key_is_in_no_transcript_log_or_error(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_anthropic.reply("fine", usage={"input_tokens": 400, "output_tokens": 2})
    fake_anthropic.error(401, "authentication_error", f"invalid x-api-key: {KEY}")
    fake_anthropic.reply("cut short", cut_after=4)
    ctx = context(anthropic_client(), estimator)
    await send(session, content="one", tools=None, ctx=ctx)
    errors: list[str] = []
    for prompt in ("two", "three"):
        with pytest.raises(ApiError) as caught:
            await send(session, content=prompt, tools=None, ctx=ctx)
        errors.append(f"{caught.value} {caught.value.data!r}")
    assert all(r.api_key == KEY for r in fake_anthropic.message_requests())  # it was used
    on_disk = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert on_disk and KEY not in on_disk
    assert all(KEY not in e for e in errors)
    assert caplog.records and all(KEY not in r.getMessage() for r in caplog.records)


async def test_a_send_with_no_content_after_a_broken_reply_makes_the_reply_again(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    fake_anthropic.reply("Here is the first half", cut_after=5)
    ctx = context(anthropic_client(), estimator)
    with pytest.raises(ApiError) as caught:
        await send(session, content="explain", tools=None, ctx=ctx)
    prompt_id = caught.value.data["promptMessageId"]
    partial = session.view_messages()[-1]
    assert partial.stop_reason == "interrupted"
    fake_anthropic.reply("The whole answer.")
    result = await send(session, content=None, tools=None, ctx=ctx)  # the documented retry
    assert result.message.text() == "The whole answer."
    # asked again after the prompt alone: the partial is set aside as a rewind sets it
    sent = fake_anthropic.message_requests()[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert session.view == [prompt_id, result.message.id]
    assert result.set_aside is not None and result.set_aside.summarized_ids == [partial.id]
    # nothing lost: the transcript still holds it, and undoing the rewind puts it back
    assert partial.id in session.messages
    session.uncompact(result.set_aside.id)
    assert session.view == [prompt_id, partial.id, result.message.id]


async def test_a_refused_reply_leaves_the_view_so_the_next_prompt_does_not_carry_it(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    # the API refuses every later request that carries the refused turn, until it changes
    fake_anthropic.reply("Sure, here is how to", stop_reason="refusal")
    ctx = context(anthropic_client(), estimator)
    refused = await send(session, content="do the bad thing", tools=None, ctx=ctx)
    assert refused.message.stop_reason == "refusal"
    assert refused.set_aside is not None
    assert refused.set_aside.summarized_ids == [refused.message.id]
    prompt_id = session.view[0]
    assert session.view == [prompt_id]  # set aside as a rewind to it sets it aside
    assert session.messages[refused.message.id].stop_reason == "refusal"  # kept, as refused
    fake_anthropic.reply("Happy to help with that.")
    await send(session, content="something else then", tools=None, ctx=ctx)
    sent = fake_anthropic.message_requests()[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert "Sure, here is how to" not in json.dumps(sent)


async def test_an_overload_error_event_before_any_text_is_asked_again_as_a_529_is(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    # the API answered 200, then its first event is an error: the SDK retries the same
    # overload told as HTTP 529, but not this; nothing was shown, so it can be asked again
    overloaded = ("overloaded_error", "Overloaded")
    fake_anthropic.reply("never shown", cut_after=1, stream_error=overloaded)
    fake_anthropic.reply("never shown", cut_after=1, stream_error=overloaded)
    fake_anthropic.reply("The answer.")
    deltas: list[tuple[str, str]] = []
    ctx = context(anthropic_client(), estimator, None, deltas)
    result = await send(session, content="explain", tools=None, ctx=ctx)
    assert result.message.text() == "The answer."
    assert len(fake_anthropic.message_requests()) == 3  # max_retries 2, as the SDK's
    assert "".join(text for _, text in deltas) == "The answer."
    # bounded: past the client's retries the error goes through, the prompt kept
    for _ in range(3):
        fake_anthropic.reply("never shown", cut_after=1, stream_error=overloaded)
    with pytest.raises(ApiError) as caught:
        await send(session, content="again", tools=None, ctx=ctx)
    assert "overloaded_error" in caught.value.message
    assert len(fake_anthropic.message_requests()) == 6
    # an error once text was shown is not asked again: the partial is kept
    fake_anthropic.reply("Some text then an error", cut_after=5, stream_error=overloaded)
    with pytest.raises(ApiError):
        await send(session, content="third", tools=None, ctx=ctx)
    assert len(fake_anthropic.message_requests()) == 7
    assert session.view_messages()[-1].stop_reason == "interrupted"


async def test_a_stream_that_breaks_before_any_text_is_asked_again(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    # the API answered 200 and the connection dropped after its first event (or the
    # stream ended without its last): nothing was shown, so it is asked again, as the SDK
    # asks a request again whose connection failed before the answer
    fake_anthropic.reply("never shown", cut_after=1)
    fake_anthropic.reply("never shown", cut_after=0)
    fake_anthropic.reply("The answer.")
    deltas: list[tuple[str, str]] = []
    ctx = context(anthropic_client(), estimator, None, deltas)
    result = await send(session, content="explain", tools=None, ctx=ctx)
    assert result.message.text() == "The answer."
    assert len(fake_anthropic.message_requests()) == 3
    assert "".join(text for _, text in deltas) == "The answer."
    assert [m.role for m in session.view_messages()] == ["user", "assistant"]
    # bounded by the client's retries; once text was shown the break goes through
    for _ in range(3):
        fake_anthropic.reply("never shown", cut_after=1)
    with pytest.raises(ApiError) as caught:
        await send(session, content="again", tools=None, ctx=ctx)
    assert caught.value.data["type"] == "stream_error"
    assert len(fake_anthropic.message_requests()) == 6
    fake_anthropic.reply("Some text then a break", cut_after=5)
    with pytest.raises(ApiError):
        await send(session, content="third", tools=None, ctx=ctx)
    assert len(fake_anthropic.message_requests()) == 7
    assert session.view_messages()[-1].stop_reason == "interrupted"
