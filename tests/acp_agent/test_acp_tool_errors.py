"""A tool call's error as an ACP client is told it: its summary is the error's first line,
cut as the editor's panel cuts it, live and in a `session/load` replay alike; the whole
text (capped as every result is) stays in `rawOutput`, what the model reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton_testkit.acp_client import Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block


def summaries(agent: Agent, sid: str, since: int = 0) -> list[str]:
    """The text content of each `tool_call_update` told after the `since`-th update."""
    updates: list[dict[str, Any]] = agent.recorder.updates(sid)[since:]
    return [
        c["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == "tool_call_update"
        for c in u.get("content") or []
        if c["type"] == "content"
    ]


async def test_a_huge_tool_error_is_summarized_in_one_short_line(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    far = "/" + "x" * 300_000  # outside the workspace: the error quotes it
    fake_anthropic.reply(tool_use_block("read_file", {"path": far}), stop_reason="tool_use")
    fake_anthropic.reply("That file is out of reach.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "read it")
        [live] = summaries(agent, sid)
        titles = [u["title"] for u in agent.recorder.updates(sid) if "toolCallId" in u]
        assert len(titles) == 2 and all(len(t) <= 200 for t in titles)
        assert len(live) <= 120
        assert live.startswith("'/xxx")
        [update] = agent.recorder.updates(sid, "tool_call_update")
        assert update["rawOutput"].startswith("Error: '/xxx")  # the model's text, capped
        since = len(agent.recorder.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        assert summaries(agent, sid, since) == [live]  # replayed as it was told
