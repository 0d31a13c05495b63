"""A session's title: its first prompt names a session made with none, once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_a_session_never_prompted_is_named_by_its_first_prompt_after_a_restart(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Made, then loaded by another agent process (a restart) before its first prompt: it
    kept "New conversation" for good, only a session made by this process being named."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
    fake_anthropic.reply("Hello.")
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as again:
        await again.conn.load_session(cwd=str(again.workspace), session_id=sid)
        await again.say(sid, "Plan the release notes")
        [named] = again.recorder.updates(sid, "session_info_update")
        assert named["title"] == "Plan the release notes"
        [listed] = (await again.conn.list_sessions()).sessions
        assert listed.title == "Plan the release notes"
        fake_anthropic.reply("Again.")
        await again.say(sid, "Something else")  # named once: the title stays
        assert len(again.recorder.updates(sid, "session_info_update")) == 1


@pytest.mark.parametrize(
    "block",
    [
        {"type": "text", "text": "and \udcff"},  # a JSON escape no UTF-8 text holds
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "text": "bad \ud800"}},
        {"type": "resource", "resource": {"uri": "https://x.example/\ud800", "text": "t"}},
    ],
)
async def test_a_prompt_refused_as_text_no_file_can_hold_names_no_session(
    tmp_path: Path, fake_anthropic: FakeAnthropic, block: dict[str, Any]
) -> None:
    """A block holding a lone surrogate was refused only as the prompt was stored, after
    the session was named by the prompt's words: the client was told the title, the
    transcript kept it and the next prompt did not name the session; a text block alone
    was refused in the title's words ("... at [0].title")."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        before = transcript.read_bytes()
        prompt = [{"type": "text", "text": "Fix the parser"}, block]
        with pytest.raises(RequestError) as refused:
            await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        assert refused.value.data["code"] == "invalid_params"
        assert str(refused.value).startswith("prompt.1: ")
        assert "lone surrogate" in str(refused.value) and "title" not in str(refused.value)
        assert transcript.read_bytes() == before  # nothing stored, no title
        assert not agent.recorder.updates(sid, "session_info_update")
        fake_anthropic.reply("Done.")
        await agent.say(sid, "Plan the release notes")
        [named] = agent.recorder.updates(sid, "session_info_update")
        assert named["title"] == "Plan the release notes"
        events = [json.loads(line) for line in transcript.read_text().splitlines()]
        named_by = [e["title"] for e in events if e["type"] == "meta" and "title" in e]
        assert named_by == ["Plan the release notes"]


async def test_a_title_made_of_a_prompt_holds_no_control_characters(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The first prompt's words named the session control characters and all (a pasted
    terminal line's escape sequences, a NUL): the title a rename or a create refuses ("one
    line without control characters") went to the client, the transcript and the list."""
    fake_anthropic.reply("Done.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "Why does \x1b[31mFAILED\x1b[0m show\x00 up\x07?")
        [named] = agent.recorder.updates(sid, "session_info_update")
        assert named["title"] == "Why does [31mFAILED[0m show up?"
        [listed] = (await agent.conn.list_sessions()).sessions
        assert listed.title == named["title"]


@pytest.mark.parametrize("entity", [True, False])
async def test_compact_instructions_no_file_can_hold_are_refused_before_it_starts(
    tmp_path: Path, fake_anthropic: FakeAnthropic, entity: bool
) -> None:
    """/compact with instructions holding a lone surrogate started a compaction and told
    it failed, "instructions holds text that cannot be written as UTF-8 (a lone surrogate)
    at a string": a compaction the user never had, in words naming no place in what they
    typed. The command is refused as a prompt's text is, before it runs."""
    async with running_agent(tmp_path, fake_anthropic.base_url, compaction=entity) as agent:
        sid = await agent.new()
        fake_anthropic.reply("Hello.")
        await agent.say(sid, "Hi")
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        before = transcript.read_bytes()
        told = len(agent.recorder.raw)
        prompt = [{"type": "text", "text": "/compact keep the \ud800 parser notes"}]
        with pytest.raises(RequestError) as refused:
            await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        assert refused.value.data["code"] == "invalid_params"
        message = str(refused.value)
        assert message.startswith("prompt.0: ") and "/compact" in message
        assert "lone surrogate" in message and "at a string" not in message
        assert "not run" in message
        assert transcript.read_bytes() == before
        assert agent.recorder.raw[told:] == []  # no compaction started, none failed
        assert fake_anthropic.message_requests()[1:] == []


async def test_a_first_prompt_refused_before_it_is_stored_names_no_session(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The first prompt named the session before the send stored it: one refused first
    (here the agent's ANTHROPIC_BASE_URL is no http URL; a cancel while a pasted prompt of
    megabytes is counted does the same) left the session titled by words it does not
    hold, told to the client and kept in the transcript, and the prompt the user sent once
    it worked named nothing."""
    async with running_agent(tmp_path, "ftp://127.0.0.1:1") as agent:
        sid = await agent.new()
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        prompt = [{"type": "text", "text": "Wrong words"}]
        with pytest.raises(RequestError) as refused:
            await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        assert refused.value.data["code"] == "api_error"
        assert not agent.recorder.updates(sid, "session_info_update")
        events = [json.loads(line) for line in transcript.read_text().splitlines()]
        assert [e for e in events if e["type"] == "message"] == []
        assert [e for e in events if e["type"] == "meta" and "title" in e] == []
    fake_anthropic.reply("Done.")
    async with running_agent(tmp_path, fake_anthropic.base_url, name="fixed") as fixed:
        await fixed.conn.load_session(cwd=str(fixed.workspace), session_id=sid)
        await fixed.say(sid, "Plan the release notes")
        [named] = fixed.recorder.updates(sid, "session_info_update")
        assert named["title"] == "Plan the release notes"
