"""A pinned summary the API wrote (its `compaction` block) inside the span of a later
compaction is summarized with it: the block must come first in a request, and the new
summary goes before whatever the span keeps, so left verbatim it made every later request
one the API refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.invariants import leads_with_compaction
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import prose
from baton_testkit.services import service_on

MODEL = "claude-sonnet-4-6"  # the fake's Models API lists compaction for it
SUMMARY = "<summary>1. Primary request: the questions about the parser.</summary>"


@pytest.mark.parametrize("direction", ["range", "up_to", "all"])
async def test_a_pinned_api_summary_in_a_later_span_is_summarized_and_the_next_send_goes(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, direction: str
) -> None:
    fake_anthropic.default_text = SUMMARY  # Baton's own summary, where the API's cannot go
    service = service_on(tmp_path / "data", estimator, summarizer="server")
    try:
        sid = service.create("pins", model=MODEL).session_id
        for n in range(4):
            fake_anthropic.reply(f"Answer {n}. " + prose(n, 150))
            await service.replies.send(sid, f"Question {n}: " + prose(10 + n, 80))
        first = await service.compaction.compact(sid, CompactRequest("all"))
        assert first.summarizer == "server"
        [block] = [m for m in service.session(sid).view_messages() if leads_with_compaction(m)]
        service.pin(sid, block.id, True)
        for n in range(4, 7):
            fake_anthropic.reply(f"Answer {n}. " + prose(n, 150))
            await service.replies.send(sid, f"Question {n}: " + prose(10 + n, 80))
        view = service.session(sid).view
        request = {
            "range": CompactRequest("range", block.id, view[-3]),
            "up_to": CompactRequest("up_to", view[-3]),
            "all": CompactRequest("all"),
        }[direction]

        result = await service.compaction.compact(sid, request)

        assert block.id in result.summarized_message_ids
        assert block.id not in service.session(sid).view
        fake_anthropic.reply("Done.")
        await service.replies.send(sid, "And now?")  # refused with a 400 before
        body = fake_anthropic.message_requests()[-1].body
        blocks = [
            (i, j)
            for i, message in enumerate(body["messages"])
            for j, part in enumerate(message["content"])
            if part.get("type") == "compaction"
        ]
        assert blocks in ([], [(0, 0)])
    finally:
        await service.close()
