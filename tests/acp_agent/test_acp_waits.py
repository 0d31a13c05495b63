"""A turn that waits to ask the API again (a rate limit, an overload) tells the client
each wait as a thought while it runs; `session/cancel` during a wait ends the turn at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_acp_auto_compaction import SETTINGS, past_the_threshold

from baton_testkit.acp_client import Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


def thoughts(agent: Agent, sid: str) -> list[str]:
    return [u["content"]["text"] for u in agent.recorder.updates(sid, "agent_thought_chunk")]


async def test_each_wait_is_told_as_a_thought_then_the_reply_comes(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
    fake_anthropic.error(529, "overloaded_error", "Overloaded", retry_after="0.01")
    fake_anthropic.reply("Here it is.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "go")).stop_reason == "end_turn"
        assert thoughts(agent, sid) == [
            "Rate limited by the API: trying again in 1 s (attempt 2 of 3)",
            "The API is overloaded: trying again in 1 s (attempt 3 of 3)",
        ]
        said = agent.recorder.updates(sid, "agent_message_chunk")
        assert "".join(u["content"]["text"] for u in said) == "Here it is."


async def test_a_cancel_during_a_wait_ends_the_turn_at_once(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="50")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "go"))
        rec = agent.recorder
        await rec.until(lambda: thoughts(agent, sid), what="the wait")
        assert thoughts(agent, sid) == [
            "Rate limited by the API: trying again in 50 s (attempt 2 of 3)"
        ]
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 20)).stop_reason == "cancelled"
        assert len(fake_anthropic.message_requests()) == 1  # not asked again


async def test_a_compaction_whose_summary_waits_tells_the_wait_as_a_thought(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    settings = {"summarizer": "anthropic", "keepWindow": {"minTokens": 100, "minTextMessages": 2}}
    words = " ".join(f"word{n}" for n in range(300))
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        for turn in range(3):
            fake_anthropic.reply(f"Answer {turn}: {words}")
            assert (await agent.say(sid, f"Question {turn}: {words}")).stop_reason == "end_turn"
        fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
        fake_anthropic.reply("<summary>A question, answered.</summary>")
        assert (await agent.say(sid, "/compact")).stop_reason == "end_turn"
        statuses = [u["status"] for u in agent.recorder.updates(sid, "compaction_update")]
        assert statuses == ["in_progress", "completed"]
        assert thoughts(agent, sid) == [
            "Rate limited by the API: trying again in 1 s (attempt 2 of 3)"
        ]


async def test_an_auto_compaction_before_the_reply_tells_its_summarys_wait(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        sid = await past_the_threshold(agent, fake_anthropic)
        fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
        fake_anthropic.reply("<summary>Six questions about words.</summary>")
        fake_anthropic.reply("The seventh answer.")
        assert (await agent.say(sid, "One more question")).stop_reason == "end_turn"
        statuses = [u["status"] for u in agent.recorder.updates(sid, "compaction_update")]
        assert statuses == ["in_progress", "completed"]
        assert thoughts(agent, sid) == [
            "Rate limited by the API: trying again in 1 s (attempt 2 of 3)"
        ]
