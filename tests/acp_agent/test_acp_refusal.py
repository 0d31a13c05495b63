"""A reply the API refused over ACP: it leaves the view as over LSP, an agent message says
so, and (ACP has no rewind) the next prompt takes the refused prompt's place, or asks
again when it is that prompt; a load tells the refusal the same way."""

from __future__ import annotations

import json
from pathlib import Path

from baton_testkit.acp_client import Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

REFUSED = "The API refused"


def _said(agent: Agent, sid: str, since: int = 0) -> str:
    return "".join(
        p["update"]["content"]["text"]
        for _, p in agent.recorder.raw[since:]
        if p["sessionId"] == sid
        and p["update"]["sessionUpdate"] == "agent_message_chunk"
        and p["update"]["content"]["type"] == "text"
    )


def _user_words(agent: Agent, sid: str, since: int) -> list[str]:
    return [
        p["update"]["content"]["text"]
        for _, p in agent.recorder.raw[since:]
        if p["sessionId"] == sid and p["update"]["sessionUpdate"] == "user_message_chunk"
    ]


async def test_the_next_prompt_takes_the_refused_prompts_place(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("Sure, the first step is", stop_reason="refusal")
    fake_anthropic.reply("Glad to.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        answer = await agent.say(sid, "something refused")
        assert answer.stop_reason == "refusal"
        said = _said(agent, sid)
        await agent.say(sid, "something else")
        # the API refuses again a conversation that still holds the refused turn
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert sent == [{"role": "user", "content": [{"type": "text", "text": "something else"}]}]
        assert REFUSED in said
        assert "next prompt takes this one's place" in said
        since = len(agent.recorder.raw)
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert _user_words(agent, sid, since) == ["something else"]
        assert _said(agent, sid, since) == "Glad to."


async def test_the_refused_prompt_sent_again_asks_again_and_a_load_tells_the_refusal(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("Sure, the first step is", stop_reason="refusal")
    fake_anthropic.reply("Glad to.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "something refused")
        since = len(agent.recorder.raw)
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        # the prompt is still the view's last message, with no reply: the load says why
        assert _user_words(agent, sid, since) == ["something refused"]
        assert REFUSED in _said(agent, sid, since)
        answer = await agent.say(sid, "something refused")
        assert answer.stop_reason == "end_turn"
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert "Sure, the first step is" not in json.dumps(sent)
        assert sent == [
            {"role": "user", "content": [{"type": "text", "text": "something refused"}]}
        ]
        since = len(agent.recorder.raw)
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert _user_words(agent, sid, since) == ["something refused"]
        assert _said(agent, sid, since) == "Glad to."


async def test_undo_compact_leaves_a_refused_reply_out(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A refused reply leaves the view as a rewind does; /undo-compact undoes compactions,
    and putting the refused reply back would have the API refuse every later prompt."""
    fake_anthropic.reply("First answer.")
    fake_anthropic.reply("Sure, the first step is", stop_reason="refusal")
    fake_anthropic.reply("Glad to.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "first")
        await agent.say(sid, "something refused")
        since = len(agent.recorder.raw)
        await agent.say(sid, "/undo-compact")
        assert _said(agent, sid, since).startswith("Nothing undone")
        await agent.say(sid, "something else")
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert "Sure, the first step is" not in json.dumps(sent)
        assert sent[-1] == {"role": "user", "content": [{"type": "text", "text": "something else"}]}


async def test_a_session_named_by_a_refused_prompt_is_named_by_the_one_in_its_place(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("Sure, the first step is", stop_reason="refusal")
    fake_anthropic.reply("Glad to.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "something refused")
        await agent.say(sid, "something else")
        titles = [u["title"] for u in agent.recorder.updates(sid, "session_info_update")]
        assert titles == ["something refused", "something else"]
        [listed] = (await agent.conn.list_sessions()).sessions
        assert listed.title == "something else"


async def test_a_reply_refused_after_a_tool_round_is_told_refused_by_a_load_too(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Refused after the calls it made: the prompt is not the view's last message (the
    calls' answers are), but a load tells the refusal where the refused reply stood, as it
    does after the prompt of a refused reply outside the tool loop."""
    fake_anthropic.reply(
        "Looking.", tool_use_block("list_dir", {"path": "."}), stop_reason="tool_use"
    )
    fake_anthropic.reply("Sure, the first step is", stop_reason="refusal")
    fake_anthropic.reply("Glad to.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        answer = await agent.say(sid, "something refused")
        assert answer.stop_reason == "refusal"
        live = _said(agent, sid).removeprefix("Looking.Sure, the first step is")
        assert live.startswith(REFUSED)
        since = len(agent.recorder.raw)
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert _said(agent, sid, since) == "Looking." + live  # the note in the reply's place
        await agent.say(sid, "something else")
        since = len(agent.recorder.raw)
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert _said(agent, sid, since) == "Looking.Glad to."
