"""Replies and model-backed compaction against the fake Anthropic API (never the real one)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from lsp_harness import Harness, RpcError, conversation
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

API_KEY = "sk-ant-test-0123456789abcdefghij"
WITH_KEY = {"anthropicApiKey": API_KEY}
REQUEST_CANCELLED = -32800


async def started_request(lsp: Harness, method: str, params: Any, msg_id: str) -> asyncio.Future:
    """Send a request without waiting for its answer (so that it can be cancelled)."""
    return asyncio.ensure_future(lsp.client.protocol.send_request_async(method, params, msg_id))


async def outcome(future: asyncio.Future) -> Any:
    try:
        return await future
    except JsonRpcException as exc:
        return RpcError(exc.code, exc.message, exc.data)


async def held(script: Any) -> None:
    """Until the fake is holding the scripted stream (a threading.Event set by its thread)."""
    assert await asyncio.to_thread(script.held.wait, 20)


@contextlib.asynccontextmanager
async def compaction_held(
    lsp: Harness, fake: FakeAnthropic, sid: str, pivot: str
) -> AsyncIterator[asyncio.Future]:
    """An `up_to` compaction whose summary the fake holds while the block runs (its answer,
    the future, comes once the block is left)."""
    gate = threading.Event()
    script = fake.reply("<summary>held summary</summary>", hold_after=3, gate=gate)
    params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": pivot}
    try:
        first = await started_request(lsp, protocol.COMPACT, params, "compact-1")
        await held(script)
        yield first
    finally:
        gate.set()


async def keyed_session(start_server: Any, turns: int) -> tuple[Harness, str, list[str]]:
    """A server with the API key, and a session of `turns` turns: its id and message ids."""
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create())["sessionId"]
    return lsp, sid, (await lsp.append(sid, *conversation(turns)))["messageIds"]


async def test_send_without_a_key_is_api_key_missing(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    error = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "hello"})
    assert error.baton_code == "api_key_missing"
    assert (await lsp.get(sid))["messages"] == []


async def test_send_streams_deltas_and_returns_the_reply(
    start_server, fake_anthropic: FakeAnthropic, capfd: pytest.CaptureFixture[str]
) -> None:
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create(systemPrompt="You are terse."))["sessionId"]
    fake_anthropic.reply("Hello there, friend.", usage={"input_tokens": 1200, "output_tokens": 6})
    mark = lsp.recorder.mark()
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Hi!"})

    message = result["message"]
    assert message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": "Hello there, friend."}]
    assert message["stopReason"] == "end_turn"
    assert result["usage"]["estimated"] is False
    assert result["usage"]["usedTokens"] == 1206

    deltas = [p for m, p in lsp.recorder.received[mark:] if m == protocol.SESSION_DELTA]
    assert "".join(d["text"] for d in deltas) == "Hello there, friend."
    assert {d["messageId"] for d in deltas} == {message["id"]}
    assert {d["sessionId"] for d in deltas} == {sid}
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "reply", after=mark
    )

    sent = fake_anthropic.message_requests()[-1]
    assert sent.api_key == API_KEY
    assert sent.body["system"] == "You are terse."
    assert sent.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi!"}]}]

    view = (await lsp.get(sid))["messages"]
    assert [m["role"] for m in view] == ["user", "assistant"]

    # the reply reported progress: begin ... end on one token
    kinds = [p.value.get("kind") for m, p in lsp.recorder.received[mark:] if m == types.PROGRESS]
    assert kinds[0] == "begin" and kinds[-1] == "end"

    await lsp.close()
    logs = capfd.readouterr().err + "".join(
        p.message for p in lsp.recorder.of(types.WINDOW_LOG_MESSAGE)
    )
    assert API_KEY not in logs
    assert "Hi!" not in logs and "Hello there" not in logs


async def test_a_tool_use_reply_is_returned_and_the_turn_continues(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create())["sessionId"]
    call = tool_use_block("Read", {"file_path": "a.py"}, id="toolu_abc")
    fake_anthropic.reply(call)
    tools = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]
    first = await lsp.request(
        protocol.SESSION_SEND, {"sessionId": sid, "content": "read a.py", "tools": tools}
    )
    assert first["message"]["stopReason"] == "tool_use"
    assert first["message"]["content"][0]["type"] == "tool_use"
    assert first["usage"]["breakdown"]["tools"] > 0

    error = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid})
    assert error.baton_code == "invalid_params"  # the tool call still needs its result

    answer = {"type": "tool_result", "tool_use_id": "toolu_abc", "content": "x = 1"}
    await lsp.append(sid, {"role": "user", "content": [answer]})
    fake_anthropic.reply("a.py sets x to 1.")
    second = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "tools": tools})
    assert second["message"]["content"][0]["text"] == "a.py sets x to 1."
    assert fake_anthropic.message_requests()[-1].body["tools"] == tools


async def test_api_failures_map_to_stable_codes_and_keep_the_prompt(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.prompt_too_long(actual=210_000, limit=200_000)
    too_long = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "one"})
    assert too_long.baton_code == "prompt_too_long"
    assert too_long.data["actual"] == 210_000
    prompt_id = too_long.data["promptMessageId"]

    fake_anthropic.error(401, "authentication_error", "invalid x-api-key")
    denied = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid})
    assert denied.baton_code == "api_error"
    assert API_KEY not in denied.message

    view = (await lsp.get(sid))["messages"]
    assert [m["id"] for m in view] == [prompt_id]  # the user's words stay; no reply


async def test_a_send_with_no_content_after_a_broken_stream_makes_the_reply_again(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply("Here is the first half", cut_after=5)
    broken = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "explain"})
    assert broken.baton_code == "api_error"
    [prompt, partial] = (await lsp.get(sid))["messages"]
    assert partial["stopReason"] == "interrupted"

    fake_anthropic.reply("The whole answer.")
    mark = lsp.recorder.mark()
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid})  # the retry
    assert result["message"]["content"] == [{"type": "text", "text": "The whole answer."}]
    assert result["setAside"]["reason"] == "retry"
    assert result["setAside"]["messageIds"] == [partial["id"]]
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "rewind", after=mark
    )
    view = (await lsp.get(sid))["messages"]
    assert [m["id"] for m in view] == [prompt["id"], result["message"]["id"]]
    sent = fake_anthropic.message_requests()[-1].body["messages"]
    assert sent == [{"role": "user", "content": [{"type": "text", "text": "explain"}]}]


async def test_a_refused_reply_leaves_the_view_and_the_send_says_so(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply("Sure, the first step is", stop_reason="refusal")
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "bad"})
    refused = result["message"]
    assert refused["stopReason"] == "refusal"
    aside = result["setAside"]
    assert aside["reason"] == "refusal" and aside["messageIds"] == [refused["id"]]
    assert [m["role"] for m in (await lsp.get(sid))["messages"]] == ["user"]
    replaced = await lsp.request(
        protocol.SESSION_REPLACED, {"sessionId": sid, "boundaryId": aside["boundaryId"]}
    )
    assert [m["stopReason"] for m in replaced["messages"]] == ["refusal"]  # kept, as refused

    fake_anthropic.reply("Glad to.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "something else"})
    sent = fake_anthropic.message_requests()[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]


async def test_cancel_request_stops_a_streaming_reply(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create())["sessionId"]
    gate = threading.Event()
    script = fake_anthropic.reply("part one, part two, part three", hold_after=5, gate=gate)
    try:
        mark = lsp.recorder.mark()
        future = await started_request(
            lsp, protocol.SESSION_SEND, {"sessionId": sid, "content": "go"}, "send-1"
        )
        await lsp.recorder.notification(protocol.SESSION_DELTA, after=mark)
        await held(script)
        lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="send-1"))
        result = await outcome(future)
    finally:
        gate.set()
    assert isinstance(result, RpcError) and result.code == REQUEST_CANCELLED
    changed = await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "reply", after=mark
    )
    assert changed["sessionId"] == sid
    view = (await lsp.get(sid))["messages"]
    assert [m["role"] for m in view] == ["user", "assistant"]
    assert view[1]["stopReason"] == "interrupted"
    assert view[1]["content"][0]["text"]  # what arrived is kept


async def test_compaction_with_the_anthropic_summarizer(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp, sid, ids = await keyed_session(start_server, 4)
    fake_anthropic.reply(
        "<analysis>draft</analysis>\n<summary>The user asked about parts.</summary>"
    )
    result = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    assert result["summarizer"] == "anthropic"
    assert result["summary"].startswith("The user asked about parts.")
    body = fake_anthropic.message_requests()[-1].body
    assert "tools" not in body  # a summary request offers no tools


async def test_an_empty_summary_is_summarizer_failed_and_changes_nothing(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp, sid, ids = await keyed_session(start_server, 3)
    before = await lsp.render(sid)
    fake_anthropic.reply("   ")
    error = await lsp.error(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[1]}
    )
    assert error.baton_code == "summarizer_failed"
    assert (await lsp.render(sid)) == before


async def test_a_refusal_to_summarize_is_retried_once_then_summarizer_failed(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp, sid, ids = await keyed_session(start_server, 3)
    before = await lsp.render(sid)
    fake_anthropic.reply("I cannot summarize this.")
    fake_anthropic.reply("I cannot summarize this.")
    params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[1]}
    error = await lsp.error(protocol.COMPACT, params)
    assert error.baton_code == "summarizer_failed"
    assert "no <summary> section" in error.message
    assert len(fake_anthropic.message_requests()) == 2  # the answer, then one reminder
    assert (await lsp.render(sid)) == before
    assert (await lsp.get(sid))["session"]["compactions"] == 0

    fake_anthropic.reply("I cannot summarize this.")
    fake_anthropic.reply("<summary>The user asked about parts 0 and 1.</summary>")
    result = await lsp.request(protocol.COMPACT, params)
    assert result["summary"].startswith("The user asked about parts 0 and 1.")


async def test_a_second_compaction_while_one_runs_is_refused(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp, sid, ids = await keyed_session(start_server, 3)
    params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[1]}
    async with compaction_held(lsp, fake_anthropic, sid, ids[1]) as first:
        second = await lsp.error(protocol.COMPACT, params)
        assert second.baton_code == "compaction_in_progress"
        hover = await lsp.request(
            types.TEXT_DOCUMENT_HOVER,
            {
                "textDocument": {"uri": protocol.session_uri(sid)},
                "position": {"line": 0, "character": 0},
            },
        )
        assert "cannot plan right now" in hover.contents.value
        undo = await lsp.error(protocol.UNCOMPACT, {"sessionId": sid})
        assert undo.baton_code in ("compaction_in_progress", "nothing_to_compact")
    done = await first
    assert done["summary"].startswith("held summary")
    assert (await lsp.get(sid))["session"]["compactions"] == 1


async def test_a_pin_while_a_compaction_runs_is_refused_and_the_compaction_carries_on(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """The compaction planned from the pins it found: a pin now could not keep the message
    out of its summary, so it is refused (an unpin is harmless and goes through)."""
    lsp, sid, ids = await keyed_session(start_server, 3)
    await lsp.request(protocol.SESSION_PIN, {"sessionId": sid, "messageId": ids[2], "pinned": True})
    async with compaction_held(lsp, fake_anthropic, sid, ids[1]) as first:
        pin = {"sessionId": sid, "messageId": ids[0], "pinned": True}
        refused = await lsp.error(protocol.SESSION_PIN, pin)
        assert refused.baton_code == "compaction_in_progress"
        assert "pin the message once it ends" in refused.message
        unpin = {"sessionId": sid, "messageId": ids[2], "pinned": False}
        assert (await lsp.request(protocol.SESSION_PIN, unpin))["pinned"] is False
    done = await first
    assert ids[0] in done["summarizedMessageIds"]
    view = (await lsp.get(sid))["messages"]
    assert not any(m["pinned"] for m in view)
    # once it ended, the pin goes through
    assert (await lsp.request(protocol.SESSION_PIN, {**pin, "messageId": view[-1]["id"]}))["pinned"]


async def test_cancel_request_stops_a_compaction_and_changes_nothing(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp, sid, ids = await keyed_session(start_server, 3)
    before = await lsp.render(sid)
    gate = threading.Event()
    script = fake_anthropic.reply("<summary>never used</summary>", hold_after=3, gate=gate)
    command = {
        "command": protocol.CMD_COMPACT_UP_TO,
        "arguments": [{"sessionId": sid, "messageId": ids[1]}],
    }
    params = types.ExecuteCommandParams(**command)
    try:
        future = await started_request(lsp, types.WORKSPACE_EXECUTE_COMMAND, params, "cmd-1")
        await held(script)
        lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cmd-1"))
        result = await outcome(future)
    finally:
        gate.set()
    assert isinstance(result, RpcError) and result.code == REQUEST_CANCELLED
    assert (await lsp.render(sid)) == before
    fake_anthropic.reply("<summary>second try</summary>")
    retry = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[1]})
    assert retry["summary"].startswith("second try")  # the cancelled run left no lock behind


async def test_auto_compact_pauses_after_three_failures_and_says_so(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    options = {**WITH_KEY, "contextWindow": 20_000}  # threshold 13,400, blocking 15,400
    lsp = await start_server(options=options)
    big_system = " ".join(f"rule{i}" for i in range(5_000))
    sid = (await lsp.create(systemPrompt=big_system))["sessionId"]
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["autoCompactThreshold"] <= usage["usedTokens"] < usage["blockingLimit"]

    # each turn finds the context over the threshold and nothing it may summarize
    for n in range(3):
        fake_anthropic.reply(f"a{n}", usage={"input_tokens": 14_500, "output_tokens": 2})
        reply = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": f"q{n}"})
        assert reply["message"]["role"] == "assistant"
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["autoCompactPaused"] is True
    assert usage["state"] == "error"
    published = await lsp.latest_diagnostics(sid)
    diagnostic = next(d for d in published.diagnostics if d.code == "context-usage")
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert "auto-compact paused" in diagnostic.message


async def test_send_refuses_a_session_past_the_blocking_limit(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(
        options={**WITH_KEY, "contextWindow": 20_000, "autoCompact": {"enabled": False}}
    )
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(32))
    error = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "more"})
    assert error.baton_code == "prompt_too_long"
    assert fake_anthropic.message_requests() == []


async def test_a_reply_to_an_unknown_session_is_session_not_found(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    error = await lsp.error(protocol.SESSION_SEND, {"sessionId": "s_gone", "content": "x"})
    assert error.baton_code == "session_not_found"
    bad = await lsp.error(protocol.SESSION_SEND, {"sessionId": "s_gone", "content": 7})
    assert bad.baton_code == "invalid_params"
