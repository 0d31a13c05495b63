"""/undo-compact told to the client as the compaction was: the entity it saw completed is
updated in place (cancelled: no longer in force), then the command's answer; a client
without the entity reads the answer alone, as it read the compaction's."""

from __future__ import annotations

from pathlib import Path

from test_acp_compaction import converse

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_undo_compact_updates_the_compaction_entity_the_client_saw(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        await converse(agent, fake_anthropic, sid, 4)
        fake_anthropic.reply("<summary>The user asked four questions about words.</summary>")
        await agent.say(sid, "/compact-up-to 5")
        [entity] = {u["compactionId"] for u in rec.updates(sid, "compaction_update")}
        seen = len(rec.updates(sid))
        answer = await agent.say(sid, "/undo-compact")
        assert answer.stop_reason == "end_turn"
        after = rec.updates(sid)[seen:]
        told = [(u["compactionId"], u["status"]) for u in after if "compactionId" in u]
        assert told == [(entity, "cancelled")]
        said = [u["content"]["text"] for u in after if u["sessionUpdate"] == "agent_message_chunk"]
        assert len(said) == 1 and said[0].startswith("Undid the latest compaction")
        # nothing left to undo: no entity is touched
        seen = len(rec.updates(sid))
        await agent.say(sid, "/undo-compact")
        assert not [u for u in rec.updates(sid)[seen:] if "compactionId" in u]


async def test_undo_compact_without_the_entity_is_said_only(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url, compaction=False) as agent:
        sid = await agent.new()
        await converse(agent, fake_anthropic, sid, 4)
        fake_anthropic.reply("<summary>The user asked four questions about words.</summary>")
        await agent.say(sid, "/compact-up-to 5")
        seen = len(agent.recorder.updates(sid))
        await agent.say(sid, "/undo-compact")
        after = agent.recorder.updates(sid)[seen:]
        assert not [u for u in after if "compactionId" in u]
        said = [u["content"]["text"] for u in after if u["sessionUpdate"] == "agent_message_chunk"]
        assert len(said) == 1 and said[0].startswith("Undid the latest compaction")
