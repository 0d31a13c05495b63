"""The budget note is Baton's, sent in a request near the thresholds and never stored: a
reply's usage holds its request's note, which the next request sends only when it is due
again. The figure after a compaction (the meter, `postTokens`, an auto-compaction's
"after") is the next request's: what the last usage showed besides the view is carried
without that request's note. The fake API counts each request as the estimator does."""

from __future__ import annotations

from pathlib import Path

from test_meter_thinking import Chat, without_last_prompt

from baton.core.compaction.result import CompactRequest
from baton.core.service.events import AutoCompacted, Event
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import prose, raw_size

# a 12K window: the note starts at its warning threshold, 5,640 tokens; auto-compact at 7,640
SMALL = {"contextWindow": 12_000}


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


async def test_an_auto_compaction_tells_the_request_it_leaves_without_the_notes_before(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    chat = Chat(tmp_path, estimator, fake_anthropic, "claude-sonnet-4-5", **SMALL)
    told: list[Event] = []
    chat.service.connect(lambda event: told.append(event))
    try:
        for n in range(1, 30):
            asked, _ = await turn(chat, n)
            done = [e for e in told if isinstance(e, AutoCompacted)]
            if done:
                break
        assert done and done[0].outcome.outcome == "compacted", done
        assert carried_note(chat, asked - 1) and not carried_note(chat, asked)
        # the auto-compaction ran as this send began, its prompt in the view it compacted
        body = chat.fake.message_requests()[asked].body
        assert done[0].outcome.tokens_after == raw_size(estimator, body)
    finally:
        await chat.service.close()


async def test_the_figure_after_a_compaction_leaves_out_the_note_of_the_request_before(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    more = {**SMALL, "autoCompact": {"enabled": False}}
    chat = Chat(tmp_path, estimator, fake_anthropic, "claude-sonnet-4-5", **more)
    try:
        for n in range(1, 12):
            asked, _ = await turn(chat, n)
        assert carried_note(chat, asked)
        result = await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
        meter = chat.service.usage(chat.sid).used_tokens
        asked, prompt = await turn(chat, 99)
        assert not carried_note(chat, asked)
        body = chat.fake.message_requests()[asked].body
        assert result.post_tokens == meter == raw_size(estimator, without_last_prompt(body, prompt))
    finally:
        await chat.service.close()
