"""A reply stopped while it streamed a tool call: the call never ran and no client was told
of it live (a call is told as it runs), so a `session/load` replays the reply's text
without it, and without the answer the next prompt gives it ("interrupted")."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from baton_testkit.acp_client import WAIT, Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

CALLS = {"tool_call", "tool_call_update"}


def told_calls(agent: Agent, sid: str, since: int = 0) -> list[str]:
    return [
        u["toolCallId"] for u in agent.recorder.updates(sid)[since:] if u["sessionUpdate"] in CALLS
    ]


def texts(agent: Agent, sid: str, since: int) -> list[str]:
    kinds = {"user_message_chunk", "agent_message_chunk"}
    return [
        u["content"]["text"]
        for u in agent.recorder.updates(sid)[since:]
        if u["sessionUpdate"] in kinds and u["content"]["type"] == "text"
    ]


async def test_a_call_streamed_before_a_cancel_is_replayed_as_it_was_told_none(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    # held once the call's block is whole: the reply's end never comes
    script = fake_anthropic.reply(
        "Looking.",
        tool_use_block("list_dir", {"path": "."}, id="toolu_cut"),
        stop_reason="tool_use",
        hold_after=9,
        gate=threading.Event(),
    )
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        turn = asyncio.ensure_future(agent.say(sid, "look"))
        assert await asyncio.to_thread(script.held.wait, WAIT), "the reply never got there"
        await rec.until(lambda: rec.updates(sid, "agent_message_chunk"), what="the text")
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        script.gate.set()  # type: ignore[union-attr]
        assert told_calls(agent, sid) == []  # live: the call was never shown
        since = len(rec.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert told_calls(agent, sid, since) == []
        assert texts(agent, sid, since) == ["look", "Looking."]
        fake_anthropic.reply("Back again.")
        assert (await agent.say(sid, "go on")).stop_reason == "end_turn"
        since = len(rec.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert told_calls(agent, sid, since) == []
        assert texts(agent, sid, since) == ["look", "Looking.", "go on", "Back again."]
