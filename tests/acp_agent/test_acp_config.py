"""Config options: thinking and the auto-compact threshold are the agent process's, so a
change made in one session is told to every other session open on the connection."""

from __future__ import annotations

from pathlib import Path

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_a_process_wide_option_set_in_one_session_is_told_to_the_others(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        first, second = await agent.new(), await agent.new()
        rec = agent.recorder
        await agent.conn.set_config_option(config_id="thinking", session_id=first, value="4096")
        [told] = await rec.until(lambda: rec.updates(second, "config_option_update"))
        current = {o["id"]: o["currentValue"] for o in told["configOptions"]}
        assert current["thinking"] == "4096"
        # the session's own model is its own: the others are not told of it
        await agent.conn.set_config_option(
            config_id="model", session_id=first, value="claude-haiku-4-5"
        )
        await agent.conn.set_config_option(config_id="auto_compact", session_id=first, value="50")
        updates = await rec.until(
            lambda: rec.updates(second, "config_option_update")[1:],
            what="the second config_option_update",
        )
        current = {o["id"]: o["currentValue"] for o in updates[-1]["configOptions"]}
        assert current["auto_compact"] == "50"
        assert current["model"] != "claude-haiku-4-5"
        assert len(rec.updates(second, "config_option_update")) == 2
        assert not rec.updates(first, "config_option_update")  # its answer says it
