"""`session/close` during a turn: the turn ends first, so whatever its end tells (a call
answered without running, a compaction cancelled) reaches the client before the close's
answer, and nothing of the session after it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from baton_testkit.acp_client import WAIT, Agent, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply, tool_use_block

WORDS = " ".join(f"word{n}" for n in range(400))
EDIT = {"command": "str_replace", "path": "utils.py", "old_str": "parse", "new_str": "read"}


async def close_during(agent: Agent, sid: str, turn: asyncio.Future[Any]) -> list[dict[str, Any]]:
    """Close `sid` while `turn` runs; the session's updates after the close's answer."""
    rec = agent.recorder
    await agent.request("session/close", {"sessionId": sid})
    answer = await asyncio.wait_for(turn, WAIT)
    assert answer.stop_reason == "cancelled"
    [at] = [n for n, method in rec.answered if method == "session/close"]
    await agent.conn.list_sessions()  # a round trip: anything the turn still sent is in
    return [p["update"] for _, p in rec.raw[at:] if p["sessionId"] == sid]


async def test_a_close_during_a_permission_wait_tells_the_call_before_its_answer(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("str_replace_based_edit_tool", EDIT, id="toolu_e"), stop_reason="tool_use"
    )
    client = Recorder(permission=None)  # never answers: the call waits until the close
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        (agent.workspace / "utils.py").write_text("def parse(s):\n    return s\n")
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "rename parse"))
        await client.until(lambda: client.permission_requests, what="a permission request")
        assert await close_during(agent, sid, turn) == []
        ends = [u["status"] for u in client.updates(sid, "tool_call_update")]
        assert ends == ["failed"]  # told, before the answer


async def test_a_close_during_a_compaction_tells_it_cancelled_before_its_answer(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        for turn in range(4):
            fake_anthropic.reply(f"Answer {turn}: {WORDS}")
            assert (await agent.say(sid, f"Question {turn}: {WORDS}")).stop_reason == "end_turn"
        summary = held_reply(fake_anthropic, "<summary>Four questions.</summary>", after=3)
        turn = asyncio.ensure_future(agent.say(sid, "/compact-up-to 5"))
        assert await asyncio.to_thread(summary.held.wait, WAIT), "no summary request"
        await rec.until(lambda: rec.updates(sid, "compaction_update"))
        try:
            assert await close_during(agent, sid, turn) == []
        finally:
            summary.gate.set()  # type: ignore[union-attr]
        statuses = [u["status"] for u in rec.updates(sid, "compaction_update")]
        assert statuses == ["in_progress", "cancelled"]


async def test_a_close_while_a_reply_streams_sends_nothing_of_it_after_its_answer(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        text = "A long reply, held after its first pieces. " * 9
        reply = held_reply(fake_anthropic, text, after=5)
        turn = asyncio.ensure_future(agent.say(sid, "hi"))
        assert await asyncio.to_thread(reply.held.wait, WAIT), "no reply request"
        await rec.until(lambda: rec.updates(sid, "agent_message_chunk"))
        try:
            assert await close_during(agent, sid, turn) == []
        finally:
            reply.gate.set()  # type: ignore[union-attr]


async def test_a_closed_session_can_be_written_by_another_agent(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A session closed in one agent stayed locked for writing there until that agent
    ended: the same session loaded in another editor's agent kept refusing every prompt,
    "open for writing in another Baton process", though no client had it open any more."""
    async with (
        running_agent(tmp_path, fake_anthropic.base_url, name="a") as a,
        running_agent(tmp_path, fake_anthropic.base_url, name="b") as b,
    ):
        sid = await a.new()
        fake_anthropic.reply("First.")
        await a.say(sid, "one")
        await b.request(
            "session/load", {"sessionId": sid, "cwd": str(b.workspace), "mcpServers": []}
        )
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "two from b"}]}
        with pytest.raises(RequestError) as refused:  # open in a: b's view is read-only
            await b.request("session/prompt", prompt)
        assert refused.value.data["code"] == "session_locked"

        await a.request("session/close", {"sessionId": sid})
        fake_anthropic.reply("Second.")
        assert (await b.request("session/prompt", prompt))["stopReason"] == "end_turn"

        # a loads it again and goes on after b's turn, b having let go in its turn
        await b.request("session/close", {"sessionId": sid})
        await a.request(
            "session/load", {"sessionId": sid, "cwd": str(a.workspace), "mcpServers": []}
        )
        fake_anthropic.reply("Third.")
        await a.say(sid, "three from a")
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert [m["content"][0]["text"] for m in sent if m["role"] == "user"] == [
            "one",
            "two from b",
            "three from a",
        ]
