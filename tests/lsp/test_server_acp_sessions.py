"""One data dir, two faces: a session started over ACP (`baton acp`) is listed by the
language server's `baton/session/list`, and one made by the editor is listed over ACP."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import start

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_a_session_made_over_acp_is_listed_by_the_language_server(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("Listed.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "A session started in an agent panel")
        listed = await agent.conn.list_sessions(cwd=str(agent.workspace))
        assert [s.session_id for s in listed.sessions] == [sid]
        assert listed.sessions[0].cwd == str(agent.workspace)
        assert listed.sessions[0].title == "A session started in an agent panel"
        elsewhere = await agent.conn.list_sessions(cwd=str(tmp_path / "another"))
        assert elsewhere.sessions == []
    lsp = await start(tmp_path)  # baton serve on the same data dir
    try:
        found = await lsp.request("baton/session/list", {})
        assert [s["sessionId"] for s in found["sessions"]] == [sid]
        assert found["sessions"][0]["title"] == "A session started in an agent panel"
        made = await lsp.request("baton/session/create", {"title": "From the editor"})
    finally:
        await lsp.close()
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as agent:
        listed = await agent.conn.list_sessions(cwd=str(agent.workspace))
        assert {s.session_id for s in listed.sessions} == {sid, made["sessionId"]}
