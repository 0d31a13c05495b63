"""MCP servers a client gives with session/new, load or resume: Baton connects to none, and
says so after the answer (the session works on with its own tools) rather than leave the
user to think the servers' tools are at hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

SERVERS: list[dict[str, Any]] = [
    {"name": "filesystem", "command": "/usr/bin/mcp-fs", "args": ["--stdio"], "env": []},
    {"type": "http", "name": "github", "url": "https://mcp.example.com/", "headers": []},
]


def notes(updates: list[dict[str, Any]]) -> list[str]:
    return [
        u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and "MCP" in u["content"]["text"]
    ]


async def test_mcp_servers_given_to_a_session_are_said_to_be_unused(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        rec = agent.recorder
        cwd = str(agent.workspace)
        made = await agent.request("session/new", {"cwd": cwd, "mcpServers": SERVERS})
        sid = made["sessionId"]
        await rec.until(lambda: rec.updates(sid, "usage_update"), what="the meter")
        (note,) = await rec.until(lambda: notes(rec.updates(sid)), what="the MCP note")
        assert "filesystem" in note and "github" in note
        assert "not used" in note
        # told after the answer that names the session: the client knows it by then
        before_answer = next(n for n, method in rec.answered if method == "session/new")
        assert not notes([p["update"] for _, p in rec.raw[:before_answer]])

        # none given: nothing said
        other = (await agent.request("session/new", {"cwd": cwd, "mcpServers": []}))["sessionId"]
        await rec.until(lambda: rec.updates(other, "usage_update"), what="the meter")

        # the session works on: a prompt is answered
        fake_anthropic.reply("Hello.")
        answer = await agent.say(sid, "Hi")
        assert answer.stop_reason == "end_turn"

        # load and resume say it again, once each, for the servers given then
        told = len(rec.raw)
        stdio_only = SERVERS[:1]
        await agent.request(
            "session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": stdio_only}
        )
        (loaded,) = await rec.until(
            lambda: notes([p["update"] for _, p in rec.raw[told:]]), what="the note on load"
        )
        assert "filesystem" in loaded and "github" not in loaded
        told = len(rec.raw)
        await agent.request(
            "session/resume", {"sessionId": sid, "cwd": cwd, "mcpServers": SERVERS[1:]}
        )
        (resumed,) = await rec.until(
            lambda: notes([p["update"] for _, p in rec.raw[told:]]), what="the note on resume"
        )
        assert "github" in resumed
        assert notes(rec.updates(other)) == []
    assert "MCP" in (tmp_path / "agent.stderr").read_text()  # the log says it too
