"""`baton acp` whose client closes its input while a compaction's summary is being
written ends then, the compaction cancelled before it commits, the transcript whole."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from baton_testkit.acp_client import WAIT, agent_env
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.holding import holding, no_traceback, until_held

# the summary is never written: /compact's offline compaction holds its lane's thread
SUMMARY = "baton.core.compaction.engine.summarize"


class Pipe:
    """JSON-RPC lines to and from the agent, answers by id (updates skipped)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def answer(self, request_id: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), WAIT)
            assert line, "the agent ended before it answered"
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def prompt(request_id: int, sid: str, text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return request(request_id, "session/prompt", {"sessionId": sid, "prompt": content})


async def test_acp_ends_when_its_input_closes_while_a_compaction_summarizes(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The client closed the agent's input while /compact's offline summary ran in the
    session's lane: the turn was cancelled, then waited for the lane's thread to stop,
    which a summary between two of its steps does only at its next one (forever for one
    held), and the agent with it. It ends at once now, nothing of the compaction written."""
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"summarizer": "extractive"}), encoding="utf-8")
    data_dir = tmp_path / "data"
    args = ["acp", "--settings", str(settings)]
    async with holding(SUMMARY, args, agent_env(data_dir, fake_anthropic.base_url)) as process:
        pipe = Pipe(process)
        await pipe.send(request(1, "initialize", {"protocolVersion": 1}))
        await pipe.answer(1)
        await pipe.send(request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
        sid = (await pipe.answer(2))["result"]["sessionId"]
        for turn in range(4):
            fake_anthropic.reply(f"Answer {turn}: " + "words " * 80)
            await pipe.send(prompt(3 + turn, sid, f"Question {turn}: " + "words " * 80))
            assert (await pipe.answer(3 + turn))["result"]["stopReason"] == "end_turn"
        await pipe.send(prompt(10, sid, "/compact"))
        told = await until_held(process, WAIT)
        assert process.stdin is not None
        process.stdin.close()
        code = await asyncio.wait_for(process.wait(), WAIT)  # the summary is held still
    await no_traceback(told)
    assert code == 0
    [transcript] = (data_dir / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert "boundary" not in kinds  # the compaction never committed
    assert kinds.count("message") == 8  # the four turns, whole
