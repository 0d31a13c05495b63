"""The same prompt sent again after its turn failed inside the tool loop retries the turn
from where it stopped: the prompt is neither stored nor sent twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block


def prompts(data_dir: Path, sid: str) -> list[str]:
    lines = (data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    messages = [e["message"] for e in map(json.loads, lines) if e.get("type") == "message"]
    return [b["text"] for m in messages for b in m["content"] if b["type"] == "text"]


async def test_a_prompt_sent_again_after_a_failure_between_tool_rounds_is_a_retry(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("list_dir", {"path": "."}, id="toolu_1"), stop_reason="tool_use"
    )
    fake_anthropic.error(529, "overloaded_error", "Overloaded", retry_after="0.01", times=3)
    fake_anthropic.reply("There is one file.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        (agent.workspace / "a.txt").write_text("a\n")
        sid = await agent.new()
        with pytest.raises(RequestError) as failed:
            await agent.say(sid, "list the folder")
        assert failed.value.data["code"] == "api_error"  # after the call ran and was answered
        assert (await agent.say(sid, "list the folder")).stop_reason == "end_turn"
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert json.dumps(sent).count("list the folder") == 1
        assert sent[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
        ]
        assert prompts(agent.data_dir, sid) == ["list the folder", "There is one file."]
