"""A send that waits to ask the API again (a rate limit, an overload) says so on its
progress, at once, and a cancel during the wait ends it at once."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_harness import Harness, RpcError, conversation
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-0123456789abcdefghij"
REQUEST_CANCELLED = -32800


def reports(lsp: Harness, after: int) -> list[str]:
    return [
        p.value["message"]
        for m, p in lsp.recorder.received[after:]
        if m == types.PROGRESS and p.value.get("kind") == "report" and "message" in p.value
    ]


async def test_each_wait_before_asking_again_is_reported_on_the_sends_progress(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
    fake_anthropic.error(529, "overloaded_error", "Overloaded", retry_after="0.01")
    fake_anthropic.reply("Here it is.")
    mark = lsp.recorder.mark()
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "go"})
    assert result["message"]["content"] == [{"type": "text", "text": "Here it is."}]
    said = reports(lsp, mark)
    waits = [text for text in said if "trying again" in text]
    assert waits == [
        "Rate limited by the API: trying again in 1 s (attempt 2 of 3)",
        "The API is overloaded: trying again in 1 s (attempt 3 of 3)",
    ]
    assert len(fake_anthropic.message_requests()) == 3


async def test_a_cancel_during_a_wait_ends_the_send_at_once(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="50")
    mark = lsp.recorder.mark()
    params = {"sessionId": sid, "content": "go"}
    future: asyncio.Future[Any] = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.SESSION_SEND, params, "send-1")
    )
    wait = "Rate limited by the API: trying again in 50 s (attempt 2 of 3)"
    await lsp.recorder.wait_for(lambda: wait in reports(lsp, mark))
    lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="send-1"))
    try:
        await future
        raise AssertionError("the send was not cancelled")
    except JsonRpcException as exc:
        assert RpcError(exc.code, exc.message, exc.data).code == REQUEST_CANCELLED
    assert len(fake_anthropic.message_requests()) == 1  # not asked again
    view = (await lsp.get(sid))["messages"]
    assert [m["role"] for m in view] == ["user"]  # the prompt stays, no reply


async def test_a_compaction_whose_summary_waits_reports_the_wait_on_its_progress(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
    fake_anthropic.reply("<summary>The user asked about parts.</summary>")
    mark = lsp.recorder.mark()
    result = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    assert result["summarizer"] == "anthropic"
    # told at once, though "Waiting for the model" was reported just before
    assert "Rate limited by the API: trying again in 1 s (attempt 2 of 3)" in reports(lsp, mark)


async def test_a_short_wait_of_a_compactions_summary_is_reported_all_the_same(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """A wait shorter than the interval between reports was held back, then dropped by the
    compaction's next step: the progress never said the API had been asked again."""
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="0.01")
    fake_anthropic.reply("<summary>The user asked about parts.</summary>")
    mark = lsp.recorder.mark()
    result = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    assert result["summarizer"] == "anthropic"
    assert "Rate limited by the API: trying again in 1 s (attempt 2 of 3)" in reports(lsp, mark)
