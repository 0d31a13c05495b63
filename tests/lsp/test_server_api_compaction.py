"""`summarizer: "server"` over LSP against the fake API: the block, the next reply, fallbacks."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness, conversation

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.fake_compaction import BETA

API_KEY = "sk-ant-test-0123456789abcdefghij"
MODEL = "claude-sonnet-4-6"
SERVER = {"anthropicApiKey": API_KEY, "summarizer": "server", "model": MODEL}


async def session_with(lsp: Harness, turns: int) -> tuple[str, list[str]]:
    sid = (await lsp.create(title="long", systemPrompt="You are terse.", model=MODEL))["sessionId"]
    ids = (await lsp.append(sid, *conversation(turns)))["messageIds"]
    return sid, ids


def compaction_requests(fake: FakeAnthropic) -> list[Any]:
    return [r for r in fake.message_requests() if "compaction" in (r.body or {})]


async def test_up_to_commits_the_api_block_and_the_next_reply_sends_it_first(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=SERVER)
    sid, ids = await session_with(lsp, 6)
    result = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    )
    assert result["summarizer"] == "server" and result["warnings"] == []
    assert result["summarizedMessageIds"] == ids[:4]
    [issued] = fake_anthropic.compaction.issued
    assert result["summary"] == issued["content"]
    [request] = compaction_requests(fake_anthropic)
    assert BETA in request.headers["anthropic-beta"] and len(request.body["messages"]) == 4

    messages = (await lsp.get(sid))["messages"]
    assert messages[0]["kind"] == "summary" and messages[0]["role"] == "assistant"
    assert messages[0]["content"] == [issued]
    assert [m["id"] for m in messages[1:-1]] == ids[4:]  # the kept turns follow the block
    assert messages[-1]["kind"] == "attachment"
    assert "summary written by the API" in (await lsp.render(sid))["text"]

    fake_anthropic.reply("Part 6 is next.")
    sent = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "And now?"})
    assert sent["message"]["content"] == [{"type": "text", "text": "Part 6 is next."}]
    reply_request = fake_anthropic.message_requests()[-1]
    assert BETA in reply_request.headers["anthropic-beta"]
    assert reply_request.body["messages"][0] == {"role": "assistant", "content": [issued]}

    await lsp.request(protocol.UNCOMPACT, {"sessionId": sid})
    view = [m["id"] for m in (await lsp.get(sid))["messages"]]
    assert view[: len(ids)] == ids


async def test_from_falls_back_to_the_anthropic_summary_and_the_result_says_so(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=SERVER)
    sid, ids = await session_with(lsp, 6)
    fake_anthropic.reply("<summary>The later part, in Baton's words.</summary>")
    result = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "from", "pivotMessageId": ids[6]}
    )
    assert result["summarizer"] == "anthropic"
    assert len(result["warnings"]) == 1 and "`from`" in result["warnings"][0]
    assert compaction_requests(fake_anthropic) == []


async def test_an_unavailable_compaction_falls_back_and_nothing_to_summarize_changes_nothing(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=SERVER)
    sid, ids = await session_with(lsp, 6)
    before = await lsp.get(sid)
    up_to = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[5]}

    fake_anthropic.compaction.fail("compaction_nothing_to_summarize")
    error = await lsp.error(protocol.COMPACT, up_to)
    assert error.baton_code == "nothing_to_compact" and "the API" in error.message
    assert len(compaction_requests(fake_anthropic)) == 1
    after = await lsp.get(sid)
    assert after["messages"] == before["messages"] and after["session"] == before["session"]

    fake_anthropic.compaction.fail("compaction_unavailable", times=3)  # asked again twice
    fake_anthropic.reply("<summary>Baton's own summary of the start.</summary>")
    result = await lsp.request(protocol.COMPACT, up_to)
    assert result["summarizer"] == "anthropic" and "unavailable" in result["warnings"][0]
    assert len(compaction_requests(fake_anthropic)) == 4
    assert (await lsp.get(sid))["messages"][0]["role"] == "user"
