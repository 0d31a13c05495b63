"""Each ACP session works in its own `cwd`: another session open on the same agent, in
another project, is neither named by its system prompt (nor its CLAUDE.md carried there)
nor restored by its compaction (the files its prompts attached, its instructions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError, resource_link_block, text_block

from baton_testkit.acp_client import Agent, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

WORDS = " ".join(f"word{n}" for n in range(400))


def restored_paths(agent: Agent, sid: str) -> list[str]:
    lines = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [
        m["attachment"]["path"]
        for e in events
        if e["type"] == "boundary"
        for m in e["boundary"]["newMessages"]
        if m.get("kind") == "attachment"
    ]


async def test_a_session_neither_names_nor_restores_another_sessions_project(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "CLAUDE.md").write_text("Rules of project A: ALPHA-RULES\n")
    (other / "secret.py").write_text("KEY = 'ALPHA-FILE'\n")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        app = agent.workspace / "app.py"
        app.write_text("def main():\n    return 42\n")
        a = (await agent.conn.new_session(cwd=str(other))).session_id
        fake_anthropic.reply("Seen.")
        link = resource_link_block("secret.py", (other / "secret.py").as_uri())
        await agent.conn.prompt(session_id=a, prompt=[text_block("Look at this"), link])

        b = await agent.new()  # in agent.workspace, while `a` stays open
        for turn in range(4):
            fake_anthropic.reply(f"Answer {turn}: {WORDS}")
            prompt = [text_block(f"Question {turn}: {WORDS}")]
            if turn == 0:
                prompt.append(resource_link_block("app.py", app.as_uri()))
            await agent.conn.prompt(session_id=b, prompt=prompt)
        system = json.dumps(fake_anthropic.message_requests()[-1].body["system"])
        assert str(agent.workspace) in system
        assert str(other) not in system and "ALPHA-RULES" not in system

        fake_anthropic.reply("<summary>Four questions about words.</summary>")
        assert (await agent.say(b, "/compact-up-to 5")).stop_reason == "end_turn"
        assert restored_paths(agent, b) == [str(app)]  # its own file, nothing of `a`'s
        stored = (agent.data_dir / "sessions" / f"{b}.jsonl").read_text()
        assert "ALPHA-FILE" not in stored and "ALPHA-RULES" not in stored


async def test_a_cwd_holding_a_nul_byte_is_invalid_params_and_makes_no_session(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Such a cwd was taken: the session's tools had no folder (they drop it) while its
    system prompt named it, and it was listed and kept as the session's folder."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        folders = (agent.data_dir / "acp-folders.json").read_bytes()
        bad = f"{agent.workspace}\x00x"
        for method, params in (
            ("session/new", {"cwd": bad, "mcpServers": []}),
            ("session/load", {"sessionId": sid, "cwd": bad, "mcpServers": []}),
            ("session/resume", {"sessionId": sid, "cwd": bad}),
        ):
            with pytest.raises(RequestError) as refused:
                await agent.request(method, params)
            assert refused.value.data["code"] == "invalid_params", method
        listed = (await agent.conn.list_sessions()).sessions
        assert [s.session_id for s in listed] == [sid]
        assert (agent.data_dir / "acp-folders.json").read_bytes() == folders
