"""`baton acp` whose client closes its input while a tool's read-only work (a folder
listed, the workspace walked) runs in its thread ends then, not once that work ends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_acp_input_ends_compacting import Pipe, prompt, request

from baton_testkit.acp_client import WAIT, agent_env
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.holding import holding, no_traceback, until_held


@pytest.mark.parametrize(
    ("target", "tool", "tool_input"),
    [
        ("baton.core.tools.list_dir._listing", "list_dir", {}),
        ("baton.core.tools.find_files._find", "find_files", {"pattern": "*.py"}),
    ],
)
async def test_acp_ends_when_its_input_closes_while_a_tool_reads(
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    target: str,
    tool: str,
    tool_input: dict[str, str],
) -> None:
    """The tool's work ran in the loop's default executor, whose threads the process's
    end waits for: a listing held (a folder on a hung network mount) held the agent after
    its client had gone, for good. It ends at once now; the turn's prompt is kept."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "a.py").write_text("print(1)\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    fake_anthropic.reply(tool_use_block(tool, tool_input), stop_reason="tool_use")
    async with holding(target, ["acp"], agent_env(data_dir, fake_anthropic.base_url)) as process:
        pipe = Pipe(process)
        await pipe.send(request(1, "initialize", {"protocolVersion": 1}))
        await pipe.answer(1)
        await pipe.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        sid = (await pipe.answer(2))["result"]["sessionId"]
        await pipe.send(prompt(3, sid, "What is in the workspace?"))
        told = await until_held(process, WAIT)
        assert process.stdin is not None
        process.stdin.close()
        code = await asyncio.wait_for(process.wait(), WAIT)  # the listing is held still
    await no_traceback(told)
    assert code == 0
    [transcript] = (data_dir / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    first = next(e["message"] for e in events if e["type"] == "message")
    assert first["role"] == "user"
    assert first["content"][0]["text"] == "What is in the workspace?"  # the prompt kept
