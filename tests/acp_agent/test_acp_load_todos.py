"""The task list tool (`TodoWrite`), which the server's tool loop runs as it runs the
workspace tools, is replayed by `session/load` as it was told live: its title, its
summary, the text the model read."""

from __future__ import annotations

from pathlib import Path

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

TODOS = {"todos": [{"content": "Rename it", "status": "in_progress", "activeForm": "Renaming"}]}
FIELDS = ("title", "kind", "status", "content", "rawOutput")


async def test_a_task_list_call_is_replayed_as_it_was_told_live(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """It was replayed as another program's call: titled by its input's JSON, its whole
    result as the summary and no `rawOutput`."""
    fake_anthropic.reply(tool_use_block("TodoWrite", TODOS, id="toolu_t"), stop_reason="tool_use")
    fake_anthropic.reply("Planned.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "plan it")).stop_reason == "end_turn"
        [live] = agent.recorder.updates(sid, "tool_call_update")
        assert live["title"] == "TodoWrite" and live["rawOutput"].startswith("Task list saved")
    async with running_agent(tmp_path, fake_anthropic.base_url, name="b") as again:
        await again.conn.load_session(cwd=str(again.workspace), session_id=sid)
        [started] = again.recorder.updates(sid, "tool_call")
        assert started["title"] == "TodoWrite" and started["rawInput"] == TODOS
        [replayed] = again.recorder.updates(sid, "tool_call_update")
        assert {f: replayed.get(f) for f in FIELDS} == {f: live.get(f) for f in FIELDS}
