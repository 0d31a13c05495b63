"""The meter of a Claude Code session imported and loaded in `baton acp` is the size of the
request Baton sends next: the imported replies' usage counted Claude Code's own system
prompt and tools, and their turns' thinking, none of which Baton's request carries. The
fake API counts each request as the estimator does (a factor of 1); old tool results are
never cleared here (`microcompact.tools` empty), so the prompt's turn sends the view as
the meter saw it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from baton.core.usage.estimator import Estimator, load_cl100k
from baton_testkit.acp_client import Agent, running_agent
from baton_testkit.claude_code_gen import generate
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import SizeOfRequest, raw_size

SETTINGS = {"microcompact": {"tools": []}}
SUMMARY = "<summary>The user asked about the release script; it was read and fixed.</summary>"


def imported(tmp_path: Path) -> str:
    """An older Claude Code file (its era's records, thinking in its replies) imported
    with `baton import`; the new session's id."""
    source = generate(12, era="old", summary_first=False, repairs=False, media=False)
    path = source.write(tmp_path / "claude-code.jsonl")
    command = [sys.executable, "-m", "baton", "import", str(path)]
    command += ["--data-dir", str(tmp_path / "data")]
    said = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return said.split(" as session ")[1].split()[0]


async def told_then_sent(
    agent: Agent, fake: FakeAnthropic, estimator: Estimator, sid: str
) -> tuple[int, int, int]:
    """The meter the client holds, then a prompt: what its request sent before the prompt,
    and of that its tools."""
    told = agent.recorder.updates(sid, "usage_update")[-1]["used"]
    fake.reply("Go on.")
    await agent.say(sid, "Go on")
    sent: dict[str, Any] = fake.message_requests()[-1].body
    assert sent["messages"].pop()["content"] == [{"type": "text", "text": "Go on"}]
    return told, raw_size(estimator, sent), estimator.count_json(sent["tools"])


async def test_a_loaded_imported_session_meters_the_request_baton_sends(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """It said 35,374 tokens, the last imported reply's usage, where the request held
    21,139: that usage counted the client's prompt and tools (Claude Code's), and the
    meter the imported turns' thinking (523 tokens), which Baton's request leaves out,
    but not the tools Baton's first send offers (591)."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    sid = imported(tmp_path)
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        await agent.recorder.until(lambda: agent.recorder.updates(sid, "usage_update"))

        told, sent, tools = await told_then_sent(agent, fake_anthropic, estimator, sid)

        assert tools > 0 and told == sent


async def test_a_compaction_of_an_imported_session_carries_no_other_clients_prompt(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """What the imported usage held beyond Baton's estimate (Claude Code's prompt and
    tools) was carried across the compaction: 26,790 tokens told, 13,048 sent."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    sid = imported(tmp_path)
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        fake_anthropic.reply(SUMMARY)
        assert (await agent.say(sid, "/compact")).stop_reason == "end_turn"

        told, sent, tools = await told_then_sent(agent, fake_anthropic, estimator, sid)

        assert tools > 0 and told == sent


async def test_a_new_sessions_meter_counts_the_tools_its_first_prompt_offers(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The meter counted the tools the last send offered: none before the first, so a
    new session said 83 tokens (its system prompt) where its first request held 674
    besides the prompt, with the workspace tools (591) the prompt's turn offers."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=SETTINGS) as agent:
        sid = await agent.new()
        await agent.recorder.until(lambda: agent.recorder.updates(sid, "usage_update"))

        told, sent, tools = await told_then_sent(agent, fake_anthropic, estimator, sid)

        assert tools > 0 and told == sent
