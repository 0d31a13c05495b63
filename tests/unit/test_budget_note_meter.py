"""The budget note is Baton's, sent in a request near the thresholds and never stored: a
reply's usage holds its request's note, which the next request sends only when it is due
again. The figure after a compaction (the meter, `postTokens`, an auto-compaction's
"after") is the next request's: what the last usage showed besides the view is carried
without that request's note, and the note the next request carries, when due, is counted.
The fake API counts each request as the estimator does."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_meter_thinking import Chat

from baton.core.compaction.result import CompactRequest
from baton.core.service.events import AutoCompacted, Event
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import prose, raw_size

# a 12K window: the note starts at its warning threshold, 5,640 tokens; auto-compact at 7,640
SMALL = {"contextWindow": 12_000}
# where the note starts: the warning threshold (none after a compaction), or at once
STARTS = [None, 0]


def settings(start: int | None, **more: object) -> dict[str, object]:
    noted = {} if start is None else {"budgetNote": {"startTokens": start}}
    return {**SMALL, **noted, **more}


def carried_note(chat: Chat, request: int) -> bool:
    """Whether the `request`th request carried the note (a text block after the prompt)."""
    content = chat.fake.message_requests()[request].body["messages"][-1]["content"]
    return isinstance(content, list) and len(content) > 1


async def turn(chat: Chat, n: int) -> tuple[int, str]:
    """One send; (the index of its request, its prompt)."""
    asked = len(chat.fake.message_requests())
    prompt = f"Q{n}: " + prose(1_000 + n, 120)
    chat.fake.reply(f"Answer {n}. " + prose(2_000 + n, 150))
    await chat.service.replies.send(chat.sid, prompt)
    return asked, prompt


@pytest.mark.parametrize("start", STARTS)
async def test_an_auto_compaction_tells_the_request_it_leaves(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, start: int | None
) -> None:
    chat = Chat(tmp_path, estimator, fake_anthropic, "claude-sonnet-4-5", **settings(start))
    told: list[Event] = []
    chat.service.connect(lambda event: told.append(event))
    try:
        for n in range(1, 30):
            asked, _ = await turn(chat, n)
            done = [e for e in told if isinstance(e, AutoCompacted)]
            if done:
                break
        assert done and done[0].outcome.outcome == "compacted", done
        assert carried_note(chat, asked - 1)
        assert carried_note(chat, asked) == (start is not None)
        # the auto-compaction ran as this send began, its prompt in the view it compacted
        body = chat.fake.message_requests()[asked].body
        assert done[0].outcome.tokens_after == raw_size(estimator, body)
    finally:
        await chat.service.close()


@pytest.mark.parametrize("start", STARTS)
async def test_the_figure_after_a_compaction_is_the_next_requests_with_its_note(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, start: int | None
) -> None:
    more = settings(start, autoCompact={"enabled": False})
    chat = Chat(tmp_path, estimator, fake_anthropic, "claude-sonnet-4-5", **more)
    try:
        for n in range(1, 12):
            asked, _ = await turn(chat, n)
        assert carried_note(chat, asked)
        result = await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
        meter = chat.service.usage(chat.sid).used_tokens
        asked, prompt = await turn(chat, 99)
        assert carried_note(chat, asked) == (start is not None)
        body = chat.fake.message_requests()[asked].body
        # the request but its prompt's turn (the note, when it goes, is a block of that turn)
        turn_of_prompt = 4 + estimator.count_blocks([{"type": "text", "text": prompt}])
        assert result.post_tokens == meter == raw_size(estimator, body) - turn_of_prompt
    finally:
        await chat.service.close()


@pytest.mark.parametrize("change", [{"enabled": False}, {"startTokens": 100_000}])
async def test_an_anchored_figure_leaves_out_a_note_no_longer_due(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, change: dict[str, object]
) -> None:
    """The last reply's usage holds its request's note, which stands for the next one's
    while the note is due; once it is not (the note turned off, or its start moved past
    the context), the figure is the next request's without it."""
    chat = Chat(tmp_path, estimator, fake_anthropic, "claude-sonnet-4-5", **settings(0))
    try:
        for n in range(1, 4):
            asked, _ = await turn(chat, n)
        assert carried_note(chat, asked)
        chat.service.configure({"budgetNote": change})
        meter = chat.service.usage(chat.sid)
        asked, prompt = await turn(chat, 99)
        assert not carried_note(chat, asked) and meter.basis == "api"
        body = chat.fake.message_requests()[asked].body
        turn_of_prompt = 4 + estimator.count_blocks([{"type": "text", "text": prompt}])
        assert meter.used_tokens == raw_size(estimator, body) - turn_of_prompt
    finally:
        await chat.service.close()
