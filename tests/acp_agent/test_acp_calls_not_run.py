"""A call the tool loop answers without running it (the turn was cancelled while an
earlier call waited for permission, or the turn reached `tools.maxSteps`) is told to the
client as the calls that ran are: a `tool_call`, then its failed `tool_call_update` with
the text the model reads, before the prompt's answer, as `session/load` replays it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from baton_testkit.acp_client import WAIT, Agent, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

EDIT = {"command": "str_replace", "path": "utils.py", "old_str": "parse", "new_str": "read"}


def told(agent: Agent, sid: str) -> list[tuple[str, str, str]]:
    """Each call's updates as (kind of update, call id, status)."""
    kinds = {"tool_call", "tool_call_update"}
    return [
        (u["sessionUpdate"], u["toolCallId"], u["status"])
        for u in agent.recorder.updates(sid)
        if u["sessionUpdate"] in kinds
    ]


def last_text(agent: Agent, sid: str, call_id: str) -> Any:
    update = [
        u for u in agent.recorder.updates(sid, "tool_call_update") if u["toolCallId"] == call_id
    ]
    return update[-1]["content"][0]["content"]["text"]


async def replayed(tmp_path: Path, fake: FakeAnthropic, sid: str) -> list[tuple[str, str, str]]:
    async with running_agent(tmp_path, fake.base_url, name="again") as again:
        await again.conn.load_session(cwd=str(again.workspace), session_id=sid)
        return told(again, sid)


async def test_cancel_while_asked_tells_the_waiting_call_and_the_calls_after_it_not_run(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("str_replace_based_edit_tool", EDIT, id="toolu_e"),
        tool_use_block("list_dir", {"path": "."}, id="toolu_l"),
        stop_reason="tool_use",
    )
    client = Recorder(permission=None)  # never answers: the call waits until the cancel
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        (agent.workspace / "utils.py").write_text("def parse(s):\n    return s\n")
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "rename parse"))
        await client.until(lambda: client.permission_requests, what="a permission request")
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        live = told(agent, sid)
        assert live == [
            ("tool_call", "toolu_e", "in_progress"),
            ("tool_call_update", "toolu_e", "failed"),
            ("tool_call", "toolu_l", "in_progress"),
            ("tool_call_update", "toolu_l", "failed"),
        ]
        assert last_text(agent, sid, "toolu_e").startswith("Not run")
        assert last_text(agent, sid, "toolu_l").startswith("Not run")
    ends = [(c, s) for u, c, s in await replayed(tmp_path, fake_anthropic, sid) if u != "tool_call"]
    assert ends == [(c, s) for u, c, s in live if u != "tool_call"]


async def test_a_call_past_the_step_cap_is_told_not_run(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("list_dir", {"path": "."}, id="toolu_1"), stop_reason="tool_use"
    )
    fake_anthropic.reply(
        tool_use_block("list_dir", {"path": "."}, id="toolu_2"), stop_reason="tool_use"
    )
    settings = {"tools": {"maxSteps": 1}}
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "list the folder, twice")).stop_reason == "end_turn"
        live = told(agent, sid)
        assert live == [
            ("tool_call", "toolu_1", "in_progress"),
            ("tool_call_update", "toolu_1", "completed"),
            ("tool_call", "toolu_2", "in_progress"),
            ("tool_call_update", "toolu_2", "failed"),
        ]
        assert "maxSteps" in last_text(agent, sid, "toolu_2")
    ends = [(c, s) for u, c, s in await replayed(tmp_path, fake_anthropic, sid) if u != "tool_call"]
    assert ends == [(c, s) for u, c, s in live if u != "tool_call"]
