"""The budget note is Baton's, sent in the request and never stored: the usage of a reply
made after it holds the note's tokens, which no estimate of the view holds. Calibration
leaves them out of what it learns, so the note is not taken for a tokenizer that counts
more: here the fake API counts as the estimator does (a factor of 1), and the factor stays
at 1 when the note first appears (the growth since the last usage holds it) and when the
session's first request carries it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_meter_thinking import Chat

from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import prose

# a 12K window: the note starts at its warning threshold, 5,640 tokens, some ten turns in
SMALL = {"contextWindow": 12_000, "autoCompact": {"enabled": False}}


def carried_note(fake: FakeAnthropic, request: int) -> bool:
    """Whether the `request`th request carried the note (a text block after the prompt)."""
    content = fake.message_requests()[request].body["messages"][-1]["content"]
    return isinstance(content, list) and len(content) > 1


async def factors(chat: Chat, turns: int) -> list[tuple[bool, float]]:
    """(whether its request carried the note, the factor after its reply) for each turn."""
    seen: list[tuple[bool, float]] = []
    for n in range(1, turns + 1):
        asked = len(chat.fake.message_requests())
        chat.fake.reply(f"Answer {n}. " + prose(2_000 + n, 150))
        await chat.service.replies.send(chat.sid, f"Q{n}: " + prose(1_000 + n, 120))
        seen.append((carried_note(chat.fake, asked), chat.estimator.factor))
    return seen


async def run(tmp_path: Path, estimator: Estimator, fake: FakeAnthropic, **more: Any) -> list:
    chat = Chat(tmp_path, estimator, fake, "claude-sonnet-4-5", **SMALL, **more)
    try:
        return await factors(chat, 13)
    finally:
        await chat.service.close()


async def test_the_note_appearing_teaches_no_factor(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    seen = await run(tmp_path, estimator, fake_anthropic)

    notes = [noted for noted, _ in seen]
    assert not notes[0] and notes[-1], notes  # it appears on the way
    assert all(abs(factor - 1.0) <= 0.002 for _, factor in seen), seen


async def test_a_first_request_carrying_the_note_teaches_no_factor(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    seen = await run(tmp_path, estimator, fake_anthropic, budgetNote={"startTokens": 0})

    assert all(noted for noted, _ in seen), seen
    assert all(abs(factor - 1.0) <= 0.002 for _, factor in seen), seen
