"""`baton acp` stopped by a signal while a reply streams: it ends as Ctrl-C ends it, its
turn cancelled, and the reply keeps what arrived."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from contextlib import suppress
from pathlib import Path

import pytest

from baton_testkit.acp_client import WAIT, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

TEXT = "Hello there, this reply is cut in the middle by the stop."


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_a_stop_mid_reply_keeps_what_arrived(
    stop: signal.Signals, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """SIGTERM (an editor or a service manager ending the agent) killed it where it stood:
    the text of the reply that had arrived, which the client had shown, was lost, and the
    agent exited -15. Ctrl-C (SIGINT) already kept it."""
    gate = threading.Event()
    reply = fake_anthropic.reply(TEXT, hold_after=6, gate=gate)
    try:
        async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
            sid = await agent.new()
            turn = asyncio.ensure_future(agent.say(sid, "hi"))
            assert await asyncio.to_thread(reply.held.wait, WAIT)
            # the client has shown part of the reply: the agent has it
            rec = agent.recorder
            await rec.until(lambda: rec.updates(sid, "agent_message_chunk"), what="a chunk")
            agent.process.send_signal(stop)
            assert await asyncio.wait_for(agent.process.wait(), WAIT * 3) == 0
            turn.cancel()
            with suppress(BaseException):
                await turn
    finally:
        gate.set()
    records = [
        json.loads(line) for line in (tmp_path / "data" / "sessions" / f"{sid}.jsonl").open()
    ]
    replies = [r["message"] for r in records if r.get("message", {}).get("role") == "assistant"]
    assert len(replies) == 1, records
    kept = replies[0]["content"][0]["text"]
    assert kept and TEXT.startswith(kept) and kept != TEXT
