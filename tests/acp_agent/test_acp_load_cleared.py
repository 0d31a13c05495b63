"""A `session/load` replays a tool call as the client saw it run, also once a
microcompaction cleared its result for the model (the transcript keeps the result)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton_testkit.acp_client import Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

# every old result of list_dir cleared at the next prompt
SETTINGS = {"microcompact": {"gapMinutes": 0, "keepRecent": 0, "tools": ["list_dir"]}}


def ends(updates: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    return [
        (u["status"], u["content"][0]["content"]["text"], u.get("rawOutput"))
        for u in updates
        if u["sessionUpdate"] == "tool_call_update"
    ]


def sent_results(fake: FakeAnthropic) -> list[Any]:
    messages = fake.message_requests()[-1].body["messages"]
    return [b["content"] for m in messages for b in m["content"] if b["type"] == "tool_result"]


async def loaded(agent: Agent, sid: str) -> list[dict[str, Any]]:
    since = len(agent.recorder.raw)
    await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
    return [p["update"] for _, p in agent.recorder.raw[since:]]


async def test_a_result_cleared_since_is_replayed_as_it_was_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("list_dir", {"path": "."}, id="toolu_1"), stop_reason="tool_use"
    )
    fake_anthropic.reply("Thirty files.")
    fake_anthropic.reply("Noted.")
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        for n in range(30):
            (agent.workspace / f"file_number_{n}.txt").write_text("a\n")
        sid = await agent.new()
        await agent.say(sid, "list the folder")
        live = ends(agent.recorder.updates(sid))
        assert live[0][:2] == ("completed", "30 entries")
        await agent.say(sid, "thanks")
        assert sent_results(fake_anthropic) == ["[Old tool result content cleared]"]
        assert ends(await loaded(agent, sid)) == live
        assert "file_number_29.txt" in json.dumps(live)
