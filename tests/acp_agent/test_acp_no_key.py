"""An agent with no API key: the auth method it offers, and what a prompt or a compaction
that needs the key says (the agent's way to set it: its environment, not the editor's
initializationOptions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

NO_KEY = "no Anthropic API key: set ANTHROPIC_API_KEY in the agent's environment, then try again."


async def test_no_key_offers_the_api_key_auth_method_and_a_prompt_asks_for_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url, key=False) as agent:
        [method] = agent.init["authMethods"]
        assert method["type"] == "env_var"
        assert method["vars"][0]["name"] == "ANTHROPIC_API_KEY"
        sid = await agent.new()
        with pytest.raises(RequestError) as refused:
            await agent.say(sid, "hello")
        assert refused.value.code == -32000  # authentication required
        assert str(refused.value) == NO_KEY
        with pytest.raises(RequestError):
            await agent.conn.authenticate(method_id=method["id"])
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        events = [json.loads(line) for line in transcript.read_text().splitlines()]
        assert all(event["type"] != "message" for event in events)


async def test_a_compaction_that_needs_the_key_names_the_agents_way_to_set_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    settings = {"summarizer": "anthropic"}
    async with running_agent(
        tmp_path, fake_anthropic.base_url, key=False, settings=settings
    ) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "/compact")).stop_reason == "end_turn"
        updates = agent.recorder.updates(sid, "compaction_update")
        assert [u["status"] for u in updates] == ["in_progress", "failed"]
        assert updates[-1]["error"] == NO_KEY
        assert fake_anthropic.message_requests() == []


async def test_a_base_url_that_is_no_url_names_the_agents_setting(tmp_path: Path) -> None:
    """ANTHROPIC_BASE_URL that is no http URL was refused with "... or set
    baton.anthropicBaseUrl": the editor's name of the setting, which an agent's --settings
    file ignores (a key that is none of its own warns and is left out)."""
    async with running_agent(tmp_path, "ftp://127.0.0.1:1") as agent:
        sid = await agent.new()
        with pytest.raises(RequestError) as refused:
            await agent.say(sid, "hello")
        message = str(refused.value)
        assert message.startswith("ANTHROPIC_BASE_URL in the environment is no http")
        assert "baton.anthropicBaseUrl" not in message
        assert "anthropicBaseUrl in the agent's --settings file" in message
