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


async def test_a_value_the_settings_gave_is_listed_and_can_be_chosen(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A thinking budget or a threshold of the --settings file that is not one of the usual
    values is offered as the current one; choosing it (a panel that sets every option it
    shows, or a user going back to it) was refused as a value the option does not take."""
    settings = {"thinking": 8000, "autoCompact": {"thresholdPercent": 75}}
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        for config_id, value in (("thinking", "8000"), ("auto_compact", "75")):
            answer = await agent.conn.set_config_option(
                config_id=config_id, session_id=sid, value=value
            )
            [option] = [o for o in answer.config_options if o.id == config_id]
            assert option.current_value == value
            assert value in [choice.value for choice in option.options]


async def test_a_model_switch_that_leaves_the_conversation_over_the_limit_says_so(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The switch's warning (what `baton/session/setModel` answers over LSP) reaches an ACP
    client too, as an agent message: the meter alone showed the new window past full."""
    settings = {"model": "claude-sonnet-4-5[1m]", "summarizer": "extractive"}
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        fake_anthropic.reply("Read it all.", usage={"input_tokens": 300_000, "output_tokens": 5})
        assert (await agent.say(sid, "read the whole repository")).stop_reason == "end_turn"
        rec = agent.recorder
        said = len(rec.updates(sid, "agent_message_chunk"))
        await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="claude-sonnet-4-5"
        )
        [meter] = await rec.until(
            lambda: [u for u in rec.updates(sid, "usage_update") if u["size"] == 200_000][:1],
            what="the meter on the new window",
        )
        assert meter["used"] >= 300_000
        [told] = await rec.until(
            lambda: rec.updates(sid, "agent_message_chunk")[said:], what="the switch's warning"
        )
        text = told["content"]["text"]
        assert text.startswith("claude-sonnet-4-5: ") and "over its limit of 177,000" in text
        assert text.endswith(": the next send compacts first."), text
