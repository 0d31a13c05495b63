"""A reply that streamed while a compaction committed was made on the view before it: no
later request matches its prefix, so its thinking goes back no more, and the meter, the
calibration and the figures after an undo leave that thinking out as the request does.

The fake API reports, for each request, the usage of what it was sent (its body counted
as the estimator counts it, at a factor of 1): the meter before a send is compared with
the size of that send's request without its new prompt."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from test_meter_thinking import Chat, thinking_sent

from baton.core.compaction.result import CompactRequest
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block
from baton_testkit.request_size import prose


async def reply_held_over_a_compaction(chat: Chat, fake: FakeAnthropic) -> None:
    """A send whose reply (thinking, then text) the fake holds while the whole
    conversation is compacted; the reply ends once the compaction has committed."""
    gate = threading.Event()
    thought = thinking_block(prose(31, 150), "sig-held")
    script = fake.reply(thought, "Held answer. " + prose(32, 100), hold_after=6, gate=gate)
    send = asyncio.ensure_future(chat.service.replies.send(chat.sid, "Q: " + prose(33, 60)))
    try:
        assert await asyncio.to_thread(script.held.wait, 20)
        await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
    finally:
        gate.set()
    await send


async def test_a_reply_that_streamed_while_a_compaction_committed_is_counted_without_its_thinking(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        for _ in range(6):
            await chat.turn()
        await reply_held_over_a_compaction(chat, fake_anthropic)

        meter, sent = await chat.next_request()

        assert thinking_sent(fake_anthropic.message_requests()[-1].body) == 0
        assert meter == sent  # it stood above by the held reply's thinking (300 tokens)
        assert estimator.factor == 1.0  # that request taught a factor below 1
        await chat.service.compaction.undo(chat.sid)
        meter, sent = await chat.next_request()
        assert meter == sent
    finally:
        await chat.service.close()
