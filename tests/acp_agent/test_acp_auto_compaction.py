"""Auto-compaction through the agent panel, as the Session Compaction RFD's entity: in
progress as soon as its summary is being written (not only once it ended), then exactly
one end for the same id: completed with the summary, or cancelled when `session/cancel`
stops the turn meanwhile, which changes nothing and keeps auto-compact going."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from pathlib import Path
from typing import Any

from acp import RequestError

from baton_testkit.acp_client import WAIT, Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, ScriptedReply, text_block

WORDS = " ".join(f"word{n}" for n in range(300))
SETTINGS = {
    "summarizer": "anthropic",  # a model writes the summary: its request can be held
    "contextWindow": 20_000,  # auto-compact threshold 13,400
    "keepWindow": {"minTokens": 300, "minTextMessages": 2},
    "autoCompact": {"backgroundPercent": 0},  # no summary written ahead
}
SUMMARY = "Six questions about words."


async def past_the_threshold(agent: Agent, fake: FakeAnthropic) -> str:
    """A session whose next prompt auto-compacts (the reported usage grows each turn)."""
    sid = await agent.new()
    await agent.conn.set_config_option(config_id="model", session_id=sid, value="claude-haiku-4-5")
    for turn in range(6):
        fake.reply(f"Answer {turn}: {WORDS}", usage={"input_tokens": 2_300 * (turn + 1)})
        assert (await agent.say(sid, f"Question {turn}: {WORDS}")).stop_reason == "end_turn"
    assert agent.recorder.updates(sid, "usage_update")[-1]["used"] >= 13_400
    assert not agent.recorder.updates(sid, "compaction_update")
    return sid


def held_summary(gate: threading.Event) -> ScriptedReply:
    """The auto-compaction's summary, held after its first events until `gate` opens."""
    content = [text_block(f"<summary>{SUMMARY}</summary>")]
    return ScriptedReply(content=content, hold_after=3, gate=gate)


async def compaction_running(agent: Agent, sid: str, summary: ScriptedReply) -> dict[str, Any]:
    """The in-progress update, once the summary is being written (it arrives meanwhile)."""
    assert await asyncio.to_thread(summary.held.wait, WAIT), "no summary request"
    rec = agent.recorder
    [running] = await rec.until(
        lambda: rec.updates(sid, "compaction_update"), what="compaction_update in_progress"
    )
    assert running["status"] == "in_progress"
    return running


def statuses(agent: Agent, sid: str) -> list[tuple[str, str]]:
    updates = agent.recorder.updates(sid, "compaction_update")
    return [(u["compactionId"], u["status"]) for u in updates]


def transcript(agent: Agent, sid: str) -> list[dict[str, Any]]:
    lines = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_an_auto_compaction_is_in_progress_while_its_summary_is_written_then_completed(
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
            running = await compaction_running(agent, sid, summary)
        finally:
            gate.set()
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        entity = running["compactionId"]
        # one entity, one end: no second one made when the attempt's outcome is told
        assert statuses(agent, sid) == [(entity, "in_progress"), (entity, "completed")]
        chunks = agent.recorder.updates(sid, "compaction_summary_chunk")
        assert chunks and all(c["compactionId"] == entity for c in chunks)
        assert SUMMARY in "".join(c["content"]["text"] for c in chunks)
        # a load replays it under the id the client saw it live
        told = len(agent.recorder.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = agent.recorder.updates(sid)[told:]
        named = [u["compactionId"] for u in replayed if "compactionId" in u]
        assert named and set(named) == {entity}


async def test_a_cancel_during_an_auto_compaction_ends_it_cancelled_once_and_changes_nothing(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        sid = await past_the_threshold(agent, fake_anthropic)
        before = transcript(agent, sid)
        gate = threading.Event()
        summary = held_summary(gate)
        fake_anthropic.add(summary)
        turn = asyncio.ensure_future(agent.say(sid, "One more question"))
        try:
            running = await compaction_running(agent, sid, summary)
            await agent.conn.cancel(session_id=sid)
            answer = await asyncio.wait_for(turn, WAIT)
        finally:
            gate.set()
        assert answer.stop_reason == "cancelled"
        entity = running["compactionId"]
        assert statuses(agent, sid) == [(entity, "in_progress"), (entity, "cancelled")]
        # nothing changed: no boundary, the prompt kept as the turn's only new record
        added = transcript(agent, sid)[len(before) :]
        assert [e["type"] for e in added] == ["message"]
        assert added[0]["message"]["role"] == "user"

        # not a failure: the next prompt auto-compacts again, a new entity with one end
        fake_anthropic.reply(f"<summary>{SUMMARY}</summary>")
        fake_anthropic.reply("The seventh answer.")
        assert (await agent.say(sid, "The question again")).stop_reason == "end_turn"
        told = statuses(agent, sid)
        assert told[:2] == [(entity, "in_progress"), (entity, "cancelled")]
        [(again, started), (ended_id, ended)] = told[2:]
        assert (again, started, ended) == (ended_id, "in_progress", "completed")
        assert again != entity
        assert [e["type"] for e in transcript(agent, sid)].count("boundary") == 1


async def test_an_auto_compaction_whose_transcript_went_away_ends_failed_without_a_traceback(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Another program put a folder in the place of the transcript while the summary was
    written: the commit failed, and the end of the compaction read the session to name its
    boundary, failed on the folder, and logged 'a listener failed on AutoCompacted' with
    the StorageError's traceback; the client's compaction stayed in progress for good."""
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        sid = await past_the_threshold(agent, fake_anthropic)
        gate = threading.Event()
        summary = held_summary(gate)
        fake_anthropic.add(summary)
        turn = asyncio.ensure_future(agent.say(sid, "One more question"))
        path = agent.data_dir / "sessions" / f"{sid}.jsonl"
        try:
            running = await compaction_running(agent, sid, summary)
            path.unlink()
            path.mkdir()
        finally:
            gate.set()
        with contextlib.suppress(RequestError):  # the turn cannot go on: no transcript
            await asyncio.wait_for(turn, WAIT)
        entity = running["compactionId"]
        rec = agent.recorder
        await rec.until(lambda: len(statuses(agent, sid)) == 2, what="the compaction's end")
        assert statuses(agent, sid) == [(entity, "in_progress"), (entity, "failed")]
        path.rmdir()
    assert "Traceback" not in (tmp_path / "agent.stderr").read_text()
