"""A `session/load` replays each call of the server's tool loop as it was told live: one of
a tool the model named that does not exist too, answered "Unknown tool" or not run at all
(its name as title, the answer's first line, the whole text as `rawOutput`), while a call
of another tool from an imported transcript keeps its name and input as title."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from baton_testkit.acp_client import WAIT, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

SHOWN = ("title", "kind", "status", "content", "rawOutput", "locations")


def shown(update: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(update.get(key) for key in SHOWN)


async def test_a_call_of_an_unknown_tool_is_replayed_as_it_was_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    call = tool_use_block("unknown_tool", {"path": "app.py", "mode": "x"}, id="toolu_u")
    fake_anthropic.reply(call, stop_reason="tool_use")
    fake_anthropic.reply("That tool does not exist.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "use it")).stop_reason == "end_turn"
        [live] = agent.recorder.updates(sid, "tool_call_update")
        assert live["title"] == "unknown_tool" and live["status"] == "failed"
        assert live["rawOutput"].startswith("Unknown tool 'unknown_tool': the tools are ")
        since = len(agent.recorder.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = [
            u
            for u in agent.recorder.updates(sid)[since:]
            if u["sessionUpdate"] == "tool_call_update"
        ]
        assert [shown(u) for u in replayed] == [shown(live)]
        [start] = [
            u for u in agent.recorder.updates(sid)[since:] if u["sessionUpdate"] == "tool_call"
        ]
        assert (start["title"], start["kind"]) == ("unknown_tool", "other")


async def test_a_call_of_an_unknown_tool_not_run_is_replayed_as_it_was_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    read = tool_use_block("read_file", {"path": "a.py"}, id="toolu_1")
    fake_anthropic.reply(read, stop_reason="tool_use")
    made_up = tool_use_block("made_up", {"x": 1}, id="toolu_2")
    fake_anthropic.reply(made_up, stop_reason="tool_use")  # past the limit: not run
    fake_anthropic.reply("Stopped there.")
    settings = {"tools": {"maxSteps": 1}}
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "go")).stop_reason == "end_turn"
        live = agent.recorder.updates(sid, "tool_call_update")
        assert live[-1]["title"] == "made_up"
        assert live[-1]["rawOutput"].startswith("Not run: this turn reached its limit")
        since = len(agent.recorder.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = [
            u
            for u in agent.recorder.updates(sid)[since:]
            if u["sessionUpdate"] == "tool_call_update"
        ]
        assert [shown(u) for u in replayed] == [shown(u) for u in live]


async def test_a_call_of_an_unknown_tool_in_a_round_in_flight_is_replayed_as_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    edit = {"command": "str_replace", "path": "utils.py", "old_str": "parse", "new_str": "read"}
    fake_anthropic.reply(
        tool_use_block("made_up", {"path": "utils.py"}, id="toolu_u"),
        tool_use_block("str_replace_based_edit_tool", edit, id="toolu_e"),
        stop_reason="tool_use",
    )
    client = Recorder(permission=None)  # the edit waits: the round's results are not stored
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        (agent.workspace / "utils.py").write_text("def parse(s):\n    return s\n")
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "rename parse"))
        await client.until(lambda: client.permission_requests, what="a permission request")
        [start] = [u for u in client.updates(sid, "tool_call") if u["toolCallId"] == "toolu_u"]
        seen = len(client.updates(sid))
        params = {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []}
        await agent.request("session/load", params)
        [again] = [
            u
            for u in client.updates(sid)[seen:]
            if u["sessionUpdate"] == "tool_call" and u["toolCallId"] == "toolu_u"
        ]
        told = ("title", "kind", "locations", "rawInput")
        assert [again.get(k) for k in told] == [start.get(k) for k in told]
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
