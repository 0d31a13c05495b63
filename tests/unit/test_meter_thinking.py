"""The meter right after a compaction counts what the next request sends: the thinking of
the turns a compaction moved (their view before them changed, so their thinking goes back
no more) is taken out of the estimate, the compaction's postTokens and what the next
reply teaches the calibration; thinking that still goes back stays counted.

The fake API reports, for each request, the usage of what it was sent (its body counted
as the estimator counts, at a factor of 1): the meter before a send is compared with the
size of that send's request without its new prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import Message, ThinkingBlock
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block
from baton_testkit.request_size import SizeOfRequest, prose, raw_size

API_KEY = "sk-ant-test-meter-thinking-00"
# the estimator counts 4 tokens of framing per stored message, the request per API turn:
# where two stored messages make one turn (a summary and the prompt after it) the meter
# is a few tokens above the request
FRAMING_SLACK = 8


def without_last_prompt(body: dict[str, Any], prompt: str) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    content = body["messages"][-1]["content"]
    content[:] = [b for b in content if b.get("text") != prompt]
    if not content:
        body["messages"].pop()
    return body


class Chat:
    def __init__(self, tmp_path: Path, estimator: Estimator, fake: FakeAnthropic) -> None:
        settings = {
            "dataDir": str(tmp_path / "data"),
            "keepWindow": {"minTokens": 300, "minTextMessages": 2},
            "summarizer": "extractive",
        }
        self.service = BatonService(
            Settings.model_validate(settings), api_key=API_KEY, estimator=estimator
        )
        self.service.keep_calibration()
        self.estimator, self.fake = estimator, fake
        fake.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
        self.sid = self.service.create("thinks", model="claude-sonnet-4-5").session_id
        self.turns = 0

    async def turn(self) -> None:
        n = self.turns = self.turns + 1
        thought = thinking_block(prose(5_000 + n, 150), f"sig-{n}")
        self.fake.reply(thought, f"Answer {n}. " + prose(2_000 + n, 200))
        await self.service.replies.send(self.sid, f"Q{n}: " + prose(1_000 + n, 120))

    def prompts(self) -> list[str]:
        view = self.service.session(self.sid).view_messages()
        return [m.id for m in view if m.role == "user" and m.kind == "message"]

    async def next_request(self) -> tuple[int, int]:
        """(the meter now, the size of the next request without its new prompt)."""
        meter = self.service.usage(self.sid).used_tokens
        before = len(self.fake.message_requests())
        prompt = "Next: " + prose(9_999, 40)
        self.fake.reply("Done. " + prose(7_777, 30))
        await self.service.replies.send(self.sid, prompt)
        body = self.fake.message_requests()[before].body
        return meter, raw_size(self.estimator, without_last_prompt(body, prompt))


def thinking_sent(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] for b in m["content"] if b.get("type") == "thinking")


@pytest.mark.parametrize("direction", ["all", "up_to", "range", "from"])
async def test_the_meter_after_a_compaction_counts_the_thinking_that_goes_back(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, direction: str
) -> None:
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        for _ in range(6):
            await chat.turn()
        prompts = chat.prompts()
        pivot = {"all": None, "up_to": prompts[3], "range": prompts[1], "from": prompts[2]}
        end = prompts[4] if direction == "range" else None
        request = CompactRequest(
            direction=direction, pivot_message_id=pivot[direction], end_message_id=end
        )  # type: ignore[arg-type]
        result = await chat.service.compaction.compact(chat.sid, request)
        assert result.post_tokens == chat.service.usage(chat.sid).used_tokens

        meter, sent = await chat.next_request()

        assert 0 <= meter - sent <= FRAMING_SLACK, (meter, sent)
        body = fake_anthropic.message_requests()[-1].body
        if direction == "from":  # the prefix it keeps is as it was: its thinking goes back
            assert thinking_sent(body) >= 2
    finally:
        await chat.service.close()


async def test_a_compaction_on_a_compaction_counts_what_the_request_after_it_sends(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The usage of the request after the first compaction left thinking out: what it saw
    besides the view (carried to the figure after the second) does not take it out twice."""
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        for _ in range(6):
            await chat.turn()
        await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
        await chat.turn()  # its request leaves the kept turns' thinking out
        await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))

        meter, sent = await chat.next_request()

        assert 0 <= meter - sent <= FRAMING_SLACK, (meter, sent)
    finally:
        await chat.service.close()


async def test_the_reply_after_a_compaction_teaches_no_false_factor(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The API counts as the estimator does here (a factor of 1): the first usage after a
    compaction, whose request went without the kept turns' thinking, keeps it at 1."""
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        for _ in range(6):
            await chat.turn()
        factor = estimator.factor
        await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
        await chat.turn()
        assert abs(estimator.factor - 1.0) <= abs(factor - 1.0) + 0.005
    finally:
        await chat.service.close()


def test_thinking_is_counted_for_the_message_at_hand_not_an_other_of_its_id(
    estimator: Estimator,
) -> None:
    """Two sessions may hold a message of one id (an import done again, a copy): the count
    of its thinking is its own, as `count_message`'s is."""
    short = Message(role="assistant", content=[ThinkingBlock(thinking="short", signature="s")])
    long = short.model_copy(
        update={"content": [ThinkingBlock(thinking=prose(4, 400), signature="s")]}
    )
    assert long.id == short.id
    first = estimator.count_thinking(short)
    assert estimator.count_thinking(long) > first + 300
    assert estimator.count_thinking(short) == first
