"""A `session/load` while a tool round runs: the round's results are stored once every call
of it is answered, so the view replays its calls pending; the load follows them with each
call as it was last told (answered, or still running), and the turn's later updates."""

from __future__ import annotations

import asyncio
from pathlib import Path

from baton_testkit.acp_client import WAIT, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

EDIT = {"command": "str_replace", "path": "utils.py", "old_str": "parse", "new_str": "read"}


async def test_a_load_while_a_call_waits_replays_the_rounds_calls_as_last_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "utils.py"}, id="toolu_r"),
        tool_use_block("str_replace_based_edit_tool", EDIT, id="toolu_e"),
        stop_reason="tool_use",
    )
    client = Recorder(permission=None)  # the edit waits for an answer that never comes
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        (agent.workspace / "utils.py").write_text("def parse(s):\n    return s\n")
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "rename parse"))
        await client.until(lambda: client.permission_requests, what="a permission request")
        seen = len(client.updates(sid))
        params = {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []}
        await agent.request("session/load", params)

        def status_after_load() -> dict[str, str]:
            kinds = {"tool_call", "tool_call_update"}
            after = [u for u in client.updates(sid)[seen:] if u["sessionUpdate"] in kinds]
            return {u["toolCallId"]: u["status"] for u in after}  # each call's last word

        # the read was answered, the edit is running: not both pending, as the view holds
        assert status_after_load() == {"toolu_r": "completed", "toolu_e": "in_progress"}
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        assert status_after_load() == {"toolu_r": "completed", "toolu_e": "failed"}
