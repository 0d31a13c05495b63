"""A prompt whose files the client reads (`fs/read_text_file`) is the session's turn from
its first step: while the client takes its time over a file, a second prompt is refused
and `session/cancel` ends the turn with nothing stored."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, resource_link_block, text_block
from acp.schema import ReadTextFileResponse

from baton_testkit.acp_client import WAIT, Agent, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


class SlowFiles(Recorder):
    """A client that answers `fs/read_text_file` only once `gate` opens."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.reading = asyncio.Event()

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.reading.set()
        await self.gate.wait()
        return ReadTextFileResponse(content="def main():\n    return 42\n")


def stored_messages(agent: Agent, sid: str) -> list[dict[str, Any]]:
    lines = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    return [e["message"] for e in map(json.loads, lines) if e["type"] == "message"]


async def prompt_reading_a_file(agent: Agent, client: SlowFiles, sid: str) -> asyncio.Future[Any]:
    app = agent.workspace / "app.py"
    app.write_text("def main():\n    return 42\n")
    blocks = [text_block("What does app.py do?"), resource_link_block("app.py", app.as_uri())]
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=blocks))
    await asyncio.wait_for(client.reading.wait(), WAIT)  # the client holds the file
    return turn


async def test_a_second_prompt_while_the_first_reads_its_file_is_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("It returns 42.", usage={"input_tokens": 60, "output_tokens": 4})
    client = SlowFiles()
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        sid = await agent.new()
        first = await prompt_reading_a_file(agent, client, sid)
        with pytest.raises(RequestError) as refused:
            await agent.say(sid, "And another thing")
        assert refused.value.data["code"] == "invalid_params"
        client.gate.set()
        assert (await asyncio.wait_for(first, WAIT)).stop_reason == "end_turn"
        messages = stored_messages(agent, sid)
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert messages[0]["content"][0]["text"] == "What does app.py do?"
        assert len(fake_anthropic.message_requests()) == 1


async def test_cancel_while_the_client_reads_the_prompts_file_ends_the_turn_storing_nothing(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    client = SlowFiles()
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        sid = await agent.new()
        turn = await prompt_reading_a_file(agent, client, sid)
        await agent.conn.cancel(session_id=sid)
        client.gate.set()  # the file comes after the cancel: too late for the turn
        answer = await asyncio.wait_for(turn, WAIT)
        assert answer.stop_reason == "cancelled"
        assert stored_messages(agent, sid) == []
        assert fake_anthropic.message_requests() == []
        fake_anthropic.reply("Here again.", usage={"input_tokens": 40, "output_tokens": 3})
        assert (await agent.say(sid, "Hello?")).stop_reason == "end_turn"
        assert [m["role"] for m in stored_messages(agent, sid)] == ["user", "assistant"]


@pytest.mark.parametrize("kind", ["resource_link", "resource"])
async def test_a_file_uri_that_is_not_utf8_text_is_invalid_params(
    tmp_path: Path, fake_anthropic: FakeAnthropic, kind: str
) -> None:
    """A lone surrogate in a `file:` URI (a JSON escape no file name can hold): the link's
    lookup on the disk ended the turn with an internal error (UnicodeEncodeError)."""
    uri = "file:///tmp/\ud800.py"
    block: dict[str, Any] = {"type": "resource_link", "name": "x.py", "uri": uri}
    if kind == "resource":
        block = {"type": "resource", "resource": {"uri": uri, "text": "x = 1\n"}}
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        with pytest.raises(RequestError) as refused:
            await agent.request("session/prompt", {"sessionId": sid, "prompt": [block]})
        assert refused.value.data["code"] == "invalid_params"
        assert "names no usable path" in str(refused.value)
        assert not (agent.data_dir / "sessions" / f"{sid}.jsonl").exists() or not stored_messages(
            agent, sid
        )
        assert fake_anthropic.message_requests() == []


@pytest.mark.parametrize("fs", [True, False])
async def test_a_linked_file_that_is_no_text_is_named_with_the_reason(
    tmp_path: Path, fake_anthropic: FakeAnthropic, fs: bool
) -> None:
    """A binary file linked in a prompt went to the model as "(it could not be read)", with
    no word of why; the editor's refusal, when it was asked, is said too."""
    fake_anthropic.reply("It is an image.", usage={"input_tokens": 60, "output_tokens": 4})
    async with running_agent(tmp_path, fake_anthropic.base_url, fs=fs) as agent:
        sid = await agent.new()
        logo = agent.workspace / "logo.png"
        logo.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        blocks = [text_block("What is this?"), resource_link_block("logo.png", logo.as_uri())]
        await agent.conn.prompt(session_id=sid, prompt=blocks)
        (prompt,) = [m for m in stored_messages(agent, sid) if m["role"] == "user"]
        note = prompt["content"][1]["text"]
        assert note.startswith(f"Linked file: {logo} (not included: a binary file")
        assert ("the editor could not read it either" in note) is fs
