"""What reaches the agent's stdin that no handler could take: it is answered (or, for a
notification, dropped) and the agent reads on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent

from baton_testkit.acp_client import Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic


class Answers(Recorder):
    """Also keeps every answer to an id the test wrote itself (the SDK drops them)."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[Any, dict[str, Any]] = {}

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.INCOMING and message.get("id") == 901:
            self.answers[message["id"]] = message
            self._changed.set()
        super().observe(event)


async def test_a_message_nested_too_deep_to_decode_is_answered_and_the_agent_goes_on(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Past the decoder's recursion limit: the agent died on it (RecursionError, exit 1)."""
    fake_anthropic.reply("still here", usage={"input_tokens": 50, "output_tokens": 2})
    client = Answers()
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        sid = await agent.new()
        deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
        stdin = agent.process.stdin
        assert stdin is not None
        for line in (
            b'{"jsonrpc": "2.0", "id": 901, "method": "session/list", "params": ' + deep + b"}",
            b'{"jsonrpc": "2.0", "method": "session/cancel", "params": ' + deep + b"}",
            b"[" * 100_000 + b"]" * 100_000,
        ):
            stdin.write(line + b"\n")
            await stdin.drain()
        await client.until(lambda: 901 in client.answers, what="an answer to 901")
        assert client.answers[901]["error"]["code"] == -32602
        await client.until(lambda: client.invalid_requests, what="an invalid request")
        assert [a["id"] for a in client.invalid_requests] == [None]  # the array; cancel dropped
        assert (await agent.say(sid, "are you there?")).stop_reason == "end_turn"


async def test_a_notification_no_handler_takes_is_dropped_without_a_traceback(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """An unknown notification, or session/cancel with params of the wrong type, wrote a
    traceback to the agent's log (the editor's output panel) for each one."""
    fake_anthropic.reply("still here", usage={"input_tokens": 50, "output_tokens": 2})
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        stdin = agent.process.stdin
        assert stdin is not None
        for line in (
            b'{"jsonrpc": "2.0", "method": "no/such/notification", "params": {}}\n',
            b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}}\n',
            b'{"jsonrpc": "2.0", "method": "session/cancel", "params": [1]}\n',
        ):
            stdin.write(line)
            await stdin.drain()
        assert (await agent.say(sid, "are you there?")).stop_reason == "end_turn"
        assert not agent.recorder.answers_without_id  # notifications are never answered
    log = (tmp_path / "agent.stderr").read_text()
    assert "Traceback" not in log
    assert log.count("dropped a notification") == 3
