"""A prompt sent while a command's compaction (/compact, /compact-up-to) runs is refused
as what it is: a compaction that is running (it may take a minute while the model writes
the summary), not "a turn" the user never started."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from acp import RequestError, text_block
from test_acp_auto_compaction import SETTINGS, compaction_running, held_summary, past_the_threshold

from baton_testkit.acp_client import WAIT, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply

WORDS = " ".join(f"word{n}" for n in range(400))


async def test_a_prompt_while_compact_runs_is_refused_saying_a_compaction_runs(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        model = "claude-sonnet-4-5"  # its summary is written by the model, as a reply
        await agent.conn.set_config_option(config_id="model", session_id=sid, value=model)
        for turn in range(4):
            fake_anthropic.reply(f"Answer {turn}: {WORDS}")
            await agent.conn.prompt(session_id=sid, prompt=[text_block(f"Q{turn}: {WORDS}")])
        summary = held_reply(fake_anthropic, "<summary>Four questions.</summary>", after=3)
        compact = asyncio.ensure_future(agent.say(sid, "/compact-up-to 5"))
        assert await asyncio.to_thread(summary.held.wait, WAIT), "no summary request"
        with pytest.raises(RequestError) as refused:
            await agent.say(sid, "And another thing")
        assert refused.value.data["code"] == "invalid_params"
        assert str(refused.value).startswith(f"a compaction is running in session {sid}")
        summary.gate.set()  # type: ignore[union-attr]
        assert (await asyncio.wait_for(compact, WAIT)).stop_reason == "end_turn"
        fake_anthropic.reply("Fine.")
        assert (await agent.say(sid, "And another thing")).stop_reason == "end_turn"


async def test_a_prompt_while_a_turn_auto_compacts_is_refused_saying_it_compacts(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        sid = await past_the_threshold(agent, fake_anthropic)
        gate = threading.Event()
        summary = held_summary(gate)
        fake_anthropic.add(summary)
        fake_anthropic.reply("The seventh answer.")
        turn = asyncio.ensure_future(agent.say(sid, "One more question"))
        try:
            await compaction_running(agent, sid, summary)
            with pytest.raises(RequestError) as refused:
                await agent.say(sid, "And another thing")
        finally:
            gate.set()
        assert refused.value.data["code"] == "invalid_params"
        assert str(refused.value) == (
            f"a turn is already running in session {sid}: it is compacting the "
            "conversation before its reply"
        )
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
