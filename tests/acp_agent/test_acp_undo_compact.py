"""/undo-compact told to the client as the compaction was: the entity it saw completed is
updated in place (cancelled: no longer in force), then the command's answer; a client
without the entity reads the answer alone, as it read the compaction's."""

from __future__ import annotations

import json
from pathlib import Path

from test_acp_compaction import converse

from baton.core.usage.estimator import Estimator, load_cl100k
from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.request_size import SizeOfRequest, raw_size


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


async def test_undo_compact_of_a_microcompaction_touches_no_entity_and_says_what_it_undid(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A microcompaction (old tool results cleared after an idle gap) is told as no entity:
    its undo sent a `cancelled` update for an id the client never saw, and said it undid
    "the latest compaction", as if the one the client saw were gone."""
    settings = {"microcompact": {"gapMinutes": 0, "keepRecent": 0}}  # cleared at once
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        (agent.workspace / "a.py").write_text("A = 1\n" * 50)
        sid = await agent.new()
        rec = agent.recorder
        fake_anthropic.reply(tool_use_block("read_file", {"path": "a.py"}), stop_reason="tool_use")
        fake_anthropic.reply("Read it.")
        await agent.say(sid, "Read a.py")
        fake_anthropic.reply("Next.")
        await agent.say(sid, "And now?")  # its request found the read's result cleared
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert sent[2]["content"][0]["content"] == "[Old tool result content cleared]"
        seen = len(rec.updates(sid))
        assert (await agent.say(sid, "/undo-compact")).stop_reason == "end_turn"
        after = rec.updates(sid)[seen:]
        assert not [u for u in rec.updates(sid) if "compactionId" in u]
        said = [u["content"]["text"] for u in after if u["sessionUpdate"] == "agent_message_chunk"]
        assert len(said) == 1 and said[0].startswith("Undid the latest microcompaction")
        lines = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
        events = [json.loads(line) for line in lines]
        [micro] = [e["boundary"]["id"] for e in events if e["type"] == "boundary"]
        assert [e["boundaryId"] for e in events if e["type"] == "uncompact"] == [micro]


async def test_the_results_an_undone_microcompaction_brought_back_go_out_with_the_next_prompt(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The idle gap since the last reply had passed still, so the next prompt's turn cleared
    them again before its request: the undo changed nothing the model saw, and the meter
    the client was told after it stood above that request. The API counts here as the
    estimator does (a factor of 1)."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    settings = {"microcompact": {"gapMinutes": 0, "keepRecent": 0}}  # cleared at once
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        (agent.workspace / "a.py").write_text("A = 1\n" * 50)
        sid = await agent.new()
        fake_anthropic.reply(tool_use_block("read_file", {"path": "a.py"}), stop_reason="tool_use")
        fake_anthropic.reply("Read it.")
        await agent.say(sid, "Read a.py")  # the loop's second request found the result cleared
        assert (await agent.say(sid, "/undo-compact")).stop_reason == "end_turn"
        told = agent.recorder.updates(sid, "usage_update")[-1]["used"]

        fake_anthropic.reply("Go on.")
        await agent.say(sid, "Go on")

        sent = fake_anthropic.message_requests()[-1].body
        [result] = sent["messages"][2]["content"]
        assert result["content"].count("A = 1") == 50  # the whole read, as the undo put it back
        assert sent["messages"].pop()["content"] == [{"type": "text", "text": "Go on"}]
        assert told == raw_size(estimator, sent)
