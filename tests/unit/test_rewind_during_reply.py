"""A rewind while a reply streams would take the prompt that reply answers out of the view
(a rewind takes its message and every later one), and the reply, once it came, stood in
the view after the turn before, answering a question no longer there (or, in a tool
round, a result whose call had left the view). It is refused, saying what to do; the
reply lands as it would have, and a rewind after it goes through."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from baton.core.errors import InvalidParams
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply
from baton_testkit.services import service_on


async def test_a_rewind_while_a_reply_streams_is_refused(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = service_on(tmp_path / "data", estimator)
    try:
        sid = service.create("t", model="claude-sonnet-4-5").session_id
        fake_anthropic.reply("First answer.")
        await service.replies.send(sid, "First question?")
        held = held_reply(fake_anthropic, "The late answer.")
        sending = asyncio.create_task(service.replies.send(sid, "Second question?"))
        while not held.held.is_set():
            await asyncio.sleep(0.01)
        session = service.session(sid)
        prompt = session.view_messages()[-1]
        assert prompt.text() == "Second question?"
        for target in (prompt.id, session.view[0]):
            with pytest.raises(InvalidParams, match="a reply is streaming"):
                service.compaction.rewind(sid, target)
        assert [m.text() for m in session.view_messages()][-1] == "Second question?"
        held.gate.set()
        reply = await sending
        texts = [m.text() for m in session.view_messages()]
        assert texts == ["First question?", "First answer.", "Second question?", "The late answer."]
        assert reply.message.text() == "The late answer."
        service.compaction.rewind(sid, prompt.id)  # done streaming: a rewind goes through
        assert [m.text() for m in session.view_messages()] == texts[:2]
    finally:
        await service.close()
