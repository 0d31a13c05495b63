"""The thinking of a reply stopped mid-way (`session/cancel`, a broken stream) is told as a
recorded reply's is: the reply is kept, as interrupted, with the thinking that arrived,
and a `session/load` replays that thinking, so the live panel is told it too."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from acp import RequestError

from baton_testkit.acp_client import WAIT, Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, text_block, thinking_block

THOUGHT = "Let me think about this deeply."


def thoughts(agent: Agent, sid: str, since: int = 0) -> list[tuple[str, str]]:
    return [
        (u["messageId"], u["content"]["text"])
        for u in agent.recorder.updates(sid)[since:]
        if u["sessionUpdate"] == "agent_thought_chunk"
    ]


async def replayed_thoughts(agent: Agent, sid: str) -> list[tuple[str, str]]:
    since = len(agent.recorder.updates(sid))
    await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
    return thoughts(agent, sid, since)


async def test_a_cancelled_reply_tells_the_thinking_it_kept(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    script = fake_anthropic.reply(
        thinking_block(THOUGHT),
        text_block("The answer is long and goes on."),
        hold_after=12,  # the thinking whole, some of the text
        gate=threading.Event(),
    )
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        turn = asyncio.ensure_future(agent.say(sid, "explain"))
        assert await asyncio.to_thread(script.held.wait, WAIT), "the reply never got there"
        await rec.until(lambda: rec.updates(sid, "agent_message_chunk"), what="the text")
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        script.gate.set()  # type: ignore[union-attr]
        [reply_id] = {u["messageId"] for u in rec.updates(sid, "agent_message_chunk")}
        assert thoughts(agent, sid) == [(reply_id, THOUGHT)]
        assert await replayed_thoughts(agent, sid) == [(reply_id, THOUGHT)]


async def test_a_broken_reply_tells_the_thinking_it_kept_before_the_error(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(thinking_block(THOUGHT), text_block("The answer is"), cut_after=11)
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        with pytest.raises(RequestError):
            await agent.say(sid, "explain")
        [reply_id] = {u["messageId"] for u in rec.updates(sid, "agent_message_chunk")}
        assert thoughts(agent, sid) == [(reply_id, THOUGHT)]  # before the answer: it is read
        assert await replayed_thoughts(agent, sid) == [(reply_id, THOUGHT)]
