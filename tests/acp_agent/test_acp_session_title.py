"""A session's title: its first prompt names a session made with none, once."""

from __future__ import annotations

from pathlib import Path

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_a_session_never_prompted_is_named_by_its_first_prompt_after_a_restart(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Made, then loaded by another agent process (a restart) before its first prompt: it
    kept "New conversation" for good, only a session made by this process being named."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
    fake_anthropic.reply("Hello.")
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as again:
        await again.conn.load_session(cwd=str(again.workspace), session_id=sid)
        await again.say(sid, "Plan the release notes")
        [named] = again.recorder.updates(sid, "session_info_update")
        assert named["title"] == "Plan the release notes"
        [listed] = (await again.conn.list_sessions()).sessions
        assert listed.title == "Plan the release notes"
        fake_anthropic.reply("Again.")
        await again.say(sid, "Something else")  # named once: the title stays
        assert len(again.recorder.updates(sid, "session_info_update")) == 1
