"""Compaction through the agent panel: /compact-up-to as a compaction entity with a lower
meter, the working set restored, /context, /undo-compact, and `session/load` in a new
process replaying every message of the view with its id."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import resource_link_block, text_block

from baton_testkit.acp_client import WAIT, Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply

WORDS = " ".join(f"word{n}" for n in range(400))


def view_ids(agent: Agent, sid: str) -> list[str]:
    """The view as the transcript's events leave it (messages, boundaries, undos)."""
    view: list[str] = []
    for line in (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "message":
            view.append(event["message"]["id"])
        elif event["type"] == "boundary":
            boundary = event["boundary"]
            joined = view[len(boundary["viewBefore"]) :]
            view = [*boundary["viewAfter"], *joined]
    return view


def replayed_ids(updates: list[dict[str, Any]]) -> list[str]:
    ids: list[str] = []
    for update in updates:
        chunk = update["sessionUpdate"] in {"user_message_chunk", "agent_message_chunk"}
        if chunk and (not ids or ids[-1] != update["messageId"]):
            ids.append(update["messageId"])
    return ids


async def converse(agent: Agent, fake: FakeAnthropic, sid: str, turns: int) -> None:
    await agent.conn.set_config_option(config_id="model", session_id=sid, value="claude-sonnet-4-5")
    app = agent.workspace / "app.py"
    app.write_text("def main():\n    return 42\n")
    for turn in range(turns):
        fake.reply(f"Answer {turn}: {WORDS}")
        prompt = [text_block(f"Question {turn}: {WORDS}")]
        if turn == 0:
            prompt.append(resource_link_block("app.py", app.as_uri()))
        answer = await agent.conn.prompt(session_id=sid, prompt=prompt)
        assert answer.stop_reason == "end_turn"


async def test_compact_up_to_is_a_compaction_entity_and_lowers_the_meter(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        await converse(agent, fake_anthropic, sid, 4)
        before = rec.updates(sid, "usage_update")[-1]["used"]
        fake_anthropic.reply("<summary>The user asked four questions about words.</summary>")
        answer = await agent.say(sid, "/compact-up-to 5")
        assert answer.stop_reason == "end_turn"
        updates = rec.updates(sid, "compaction_update")
        assert [u["status"] for u in updates] == ["in_progress", "completed"]
        assert len({u["compactionId"] for u in updates}) == 1
        chunks = rec.updates(sid, "compaction_summary_chunk")
        assert chunks and all(c["compactionId"] == updates[0]["compactionId"] for c in chunks)
        assert "".join(c["content"]["text"] for c in chunks).strip()
        told = len(rec.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        # the load replays the entity under the id the client saw it live
        replayed = [u["compactionId"] for u in rec.updates(sid)[told:] if "compactionId" in u]
        assert replayed and set(replayed) == {updates[0]["compactionId"]}
        after = rec.updates(sid, "usage_update")[-1]["used"]
        assert after < before
        view = view_ids(agent, sid)
        kinds = [m["kind"] for m in _messages(agent, sid, view)]
        assert kinds.count("summary") == 1
        assert "attachment" in kinds  # app.py, attached in the first prompt, came back

        count = len(rec.updates(sid, "agent_message_chunk"))
        await agent.say(sid, "/context")
        listing = "".join(
            c["content"]["text"] for c in rec.updates(sid, "agent_message_chunk")[count:]
        )
        assert "1. summary" in listing and view[-1] in listing
        compacted_view = view

    async with running_agent(tmp_path, fake_anthropic.base_url, compaction=False, name="b") as b:
        await b.conn.load_session(cwd=str(b.workspace), session_id=sid)
        replay = b.recorder.updates(sid)
        ids = replayed_ids(replay)
        summary = _messages(b, sid, compacted_view)[0]["id"]
        assert ids == compacted_view  # every message, the summary as an agent message
        assert summary in ids
        # a file the compaction put back is told as Baton's doing, not as a prompt of the
        # user's holding a link they never sent
        links = [u for u in replay if u.get("content", {}).get("type") == "resource_link"]
        assert [u["sessionUpdate"] for u in links] == ["agent_message_chunk"]
        (link,) = links
        assert link["content"]["name"] == "app.py"
        assert link["content"]["uri"] == (b.workspace / "app.py").as_uri()
        said = [u for u in replay if u.get("messageId") == link["messageId"]]
        assert said[0]["content"]["text"].startswith("Restored file, put back by a compaction")
        assert all(u["sessionUpdate"] == "agent_message_chunk" for u in said)
        assert not b.recorder.updates(sid, "compaction_update")  # not declared: none sent
        meter = await b.recorder.until(lambda: b.recorder.updates(sid, "usage_update"))
        compacted = meter[-1]["used"]
        count = len(b.recorder.updates(sid, "agent_message_chunk"))
        await b.say(sid, "/undo-compact")
        said = b.recorder.updates(sid, "agent_message_chunk")[count:]
        assert said, b.recorder.updates(sid)[-6:]
        assert "Undid the latest compaction" in said[0]["content"]["text"]
        assert b.recorder.updates(sid, "usage_update")[-1]["used"] > compacted

    async with running_agent(tmp_path, fake_anthropic.base_url, name="c") as c:
        await c.conn.load_session(cwd=str(c.workspace), session_id=sid)
        lines = (c.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
        events = [json.loads(line) for line in lines]
        assert events[-1]["type"] == "uncompact"  # the one compaction undone: all came back
        full_view = [e["message"]["id"] for e in events if e["type"] == "message"]
        assert len(full_view) == 8
        assert replayed_ids(c.recorder.updates(sid)) == full_view  # every message, in order


def _messages(agent: Agent, sid: str, ids: list[str]) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for line in (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "message":
            found[event["message"]["id"]] = {"kind": "message", **event["message"]}
        elif event["type"] == "boundary":
            for message in event["boundary"]["newMessages"]:
                found[message["id"]] = {"kind": "message", **message}
    return [found[i] for i in ids if i in found]


async def test_an_api_compaction_is_replayed_with_the_summary_the_api_wrote(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The `server` summarizer's summary is the API's compaction block, whose `content` is
    the summary's text: a load replayed it as "(the API's own compaction: its summary is
    not readable)", where the compaction had told its text live."""
    settings = {"summarizer": "server"}
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        rec = agent.recorder
        await converse(agent, fake_anthropic, sid, 4)
        await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="claude-sonnet-4-6"
        )
        fake_anthropic.compaction.summary("The API's summary of four questions.")
        assert (await agent.say(sid, "/compact-up-to 5")).stop_reason == "end_turn"
        live = rec.updates(sid, "compaction_summary_chunk")
        assert "".join(c["content"]["text"] for c in live) == (
            "The API's summary of four questions."
        )
        seen = len(rec.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = [
            u for u in rec.updates(sid)[seen:] if u["sessionUpdate"] == "compaction_summary_chunk"
        ]
        assert replayed == live
    async with running_agent(tmp_path, fake_anthropic.base_url, compaction=False, name="b") as b:
        await b.conn.load_session(cwd=str(b.workspace), session_id=sid)
        said = [
            u["content"].get("text")  # a restored file's link holds none
            for u in b.recorder.updates(sid, "agent_message_chunk")
        ]
        assert (
            "Summary of the earlier conversation:\n\nThe API's summary of four questions." in said
        )


async def test_auto_compaction_in_a_turn_is_a_compaction_entity(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    settings = {
        "summarizer": "extractive",
        "contextWindow": 24_000,
        "autoCompact": {"thresholdPercent": 30},
        "keepWindow": {"minTokens": 200, "minTextMessages": 2, "maxTokens": 2_000},
    }
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        rec = agent.recorder
        meters: list[int] = []
        for turn in range(10):
            # no real usage (all zero): the meter is the estimate of the view; long answers
            # and short prompts (an extractive summary keeps every prompt verbatim)
            nothing = {"input_tokens": 0, "output_tokens": 0}
            fake_anthropic.reply(f"Answer {turn}: {WORDS}", usage=nothing)
            await agent.say(sid, f"Question {turn}?")
            meters.append(rec.updates(sid, "usage_update")[-1]["used"])
            if rec.updates(sid, "compaction_update"):
                break
        updates = rec.updates(sid, "compaction_update")
        assert [u["status"] for u in updates] == ["in_progress", "completed"], (meters, updates)
        [entity] = {u["compactionId"] for u in updates}
        summary = [
            c for c in rec.updates(sid, "compaction_summary_chunk") if c["compactionId"] == entity
        ]
        assert summary
        kinds = [m["kind"] for m in _messages(agent, sid, view_ids(agent, sid))]
        assert kinds.count("summary") == 1
        assert meters[-1] < max(meters)  # the meter fell with the compaction


async def test_a_load_while_a_commands_compaction_runs_tells_it_in_progress_again(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """As for an auto-compaction: a client that rebuilds its panel from the load sees the
    compaction in progress, then its end (it got an end for an entity it had not seen)."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        await converse(agent, fake_anthropic, sid, 4)
        summary = held_reply(fake_anthropic, "<summary>Four questions.</summary>", after=3)
        turn = asyncio.ensure_future(agent.say(sid, "/compact-up-to 5"))
        assert await asyncio.to_thread(summary.held.wait, WAIT), "no summary request"
        [started] = await rec.until(lambda: rec.updates(sid, "compaction_update"))
        seen = len(rec.updates(sid))
        params = {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []}
        await agent.request("session/load", params)
        summary.gate.set()  # type: ignore[union-attr]
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        after = [
            (u["compactionId"], u["status"])
            for u in rec.updates(sid)[seen:]
            if u["sessionUpdate"] == "compaction_update"
        ]
        entity = started["compactionId"]
        assert after == [(entity, "in_progress"), (entity, "completed")]


async def test_compact_up_to_says_it_summarizes_the_message_it_names(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """`/compact-up-to 2` summarizes messages 1 and 2 (the `up_to` direction, inclusive):
    the command's description said "everything before a message", so a user naming the
    first message to keep lost it to the summary."""
    async with running_agent(tmp_path, fake_anthropic.base_url, compaction=False) as agent:
        sid = await agent.new()
        await converse(agent, fake_anthropic, sid, 2)
        [update] = agent.recorder.updates(sid, "available_commands_update")
        [command] = [c for c in update["availableCommands"] if c["name"] == "compact-up-to"]
        assert "through" in command["description"]
        assert "before" not in command["description"]
        second = view_ids(agent, sid)[1]
        fake_anthropic.reply("<summary>The first question and its answer.</summary>")
        await agent.say(sid, "/compact-up-to 2")
        assert second not in view_ids(agent, sid)  # the message named went into the summary


async def test_a_commands_summary_is_told_live_as_a_load_replays_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A command's compaction told its summary live as the model's summary alone, and a
    load (as an auto-compaction, live) as the summary message the model reads (its intro,
    the transcript's path): the panel's text changed when the session was loaded."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        await converse(agent, fake_anthropic, sid, 4)
        fake_anthropic.reply("<summary>The user asked four questions about words.</summary>")
        await agent.say(sid, "/compact-up-to 5")
        live = rec.updates(sid, "compaction_summary_chunk")
        seen = len(rec.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = [
            u for u in rec.updates(sid)[seen:] if u["sessionUpdate"] == "compaction_summary_chunk"
        ]
        assert replayed == live
        view = _messages(agent, sid, view_ids(agent, sid))
        [summary] = [m for m in view if m["kind"] == "summary"]
        told = "".join(c["content"]["text"] for c in live)
        assert told == summary["content"][0]["text"]  # what the model reads
