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
from baton.core.conversation.messages import Message, TextBlock, ThinkingBlock
from baton.core.conversation.session import Session
from baton.core.errors import PromptTooLong
from baton.core.model_api.reply_request import build_payload
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.tools.host import DiskHost
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block, tool_use_block
from baton_testkit.request_size import SizeOfRequest, prose, raw_size
from baton_testkit.services import service_on

API_KEY = "sk-ant-test-meter-thinking-00"
# the estimator counts each turn's framing once, as the request lays the view out in turns
# (`conversation/turn_framing.py`): the meter is the request's size, with no slack
FRAMING_SLACK = 0


def without_last_prompt(body: dict[str, Any], prompt: str) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    content = body["messages"][-1]["content"]
    content[:] = [b for b in content if b.get("text") != prompt]
    if not content:
        body["messages"].pop()
    return body


def request_with_prompt(session: Session, prompt: str) -> dict[str, Any]:
    """The system prompt and messages of the request a send of `prompt` makes."""
    asked = [*session.view_messages(), Message(role="user", content=[TextBlock(text=prompt)])]
    return {
        "system": session.system_prompt,
        "messages": build_payload(asked, session.system_prompt, None).messages,
    }


class Chat:
    def __init__(
        self,
        tmp_path: Path,
        estimator: Estimator,
        fake: FakeAnthropic,
        model: str = "claude-sonnet-4-5",
        **more: Any,
    ) -> None:
        settings = {
            "dataDir": str(tmp_path / "data"),
            "keepWindow": {"minTokens": 300, "minTextMessages": 2},
            "summarizer": "extractive",
            **more,
        }
        self.service = BatonService(
            Settings.model_validate(settings), api_key=API_KEY, estimator=estimator
        )
        self.service.keep_calibration()
        self.estimator, self.fake = estimator, fake
        fake.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
        self.sid = self.service.create("thinks", model=model).session_id
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


def tool_loop(fake: FakeAnthropic, seed: int, path: str) -> None:
    """The next send's tool loop: a reply that thinks and reads `path`, then one that
    thinks and answers."""
    call = tool_use_block("read_file", {"path": path})
    fake.reply(thinking_block(prose(seed, 120), f"loop-{seed}"), "Let me read it.", call)
    fake.reply(thinking_block(prose(seed + 1, 60), f"end-{seed}"), "Read. " + prose(seed + 2, 40))


async def meter_and_next(service: BatonService, fake: FakeAnthropic, sid: str) -> tuple[int, int]:
    """(the meter now, the size of the next request without the new prompt)."""
    meter = service.usage(sid).used_tokens
    before = len(fake.message_requests())
    prompt = "Next: " + prose(9_999, 30)
    fake.reply("Done.")
    await service.replies.send(sid, prompt, host=DiskHost())
    body = without_last_prompt(fake.message_requests()[before].body, prompt)
    return meter, raw_size(service.estimator, body)


async def test_a_tool_loop_compacted_in_its_middle_leaves_its_thinking_out_of_the_meter(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The tool result crosses the threshold: auto-compact runs before the loop's next
    request, which sends the turn in progress back with its thinking (its prefix changed)
    and whose reply thinks on top of it. Once a prompt closes the loop, both go without
    their thinking (no request matches that prefix again): the meter takes both out."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.py").write_text(
        "".join(f"def f{n}(x):\n    return x * {n}\n" for n in range(40))
    )
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    service = service_on(
        tmp_path / "data", estimator, workspace, contextWindow=12_000, budgetNote={"enabled": False}
    )
    try:
        sid = service.create("t", model="claude-sonnet-4-5").session_id
        n = 0
        while service.usage(sid).used_tokens < 7_300:  # the threshold is 8,040
            n += 1
            thought = thinking_block(prose(70 + n, 60), f"t{n}")
            fake_anthropic.reply(thought, "Answer. " + prose(n, 80))
            await service.replies.send(sid, f"Q{n} " + prose(100 + n, 60), host=DiskHost())
        compactions = service.session(sid).compactions
        tool_loop(fake_anthropic, 500, "big.py")
        await service.replies.send(sid, "Read big.py please.", host=DiskHost())
        assert service.session(sid).compactions == compactions + 1  # in the loop's middle
        meter, sent = await meter_and_next(service, fake_anthropic, sid)
        assert 0 <= meter - sent <= FRAMING_SLACK, (meter, sent)
    finally:
        await service.close()


async def test_a_pinned_tool_call_left_last_by_a_compaction_is_no_turn_in_progress(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """`from` a prompt, with the tool call of its turn pinned: the view ends in that call
    and its result, after the summary. The next request, a prompt's, closes that loop: the
    call's thinking (its prefix changed) goes out, and the meter and postTokens say so."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("def main():\n    return 42\n" * 8)
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    service = service_on(tmp_path / "data", estimator, workspace)
    try:
        sid = service.create("t", model="claude-sonnet-4-5").session_id
        for n in range(5):
            if n == 2:
                tool_loop(fake_anthropic, 50, "app.py")
            else:
                thought = thinking_block(prose(70 + n, 60), f"t{n}")
                fake_anthropic.reply(thought, "Answer. " + prose(n, 80))
            await service.replies.send(sid, f"Q{n} " + prose(100 + n, 60), host=DiskHost())
        session = service.session(sid)
        call = next(m for m in session.view_messages() if m.tool_uses())
        service.pin(sid, call.id, True)
        prompts = [m.id for m in session.view_messages() if m.is_user_prompt]
        request = CompactRequest(direction="from", pivot_message_id=prompts[2])
        result = await service.compaction.compact(sid, request)
        assert session.view[-2:] == [call.id, session.view[-1]]  # the call and its result
        meter, sent = await meter_and_next(service, fake_anthropic, sid)
        assert result.post_tokens == meter
        assert 0 <= meter - sent <= FRAMING_SLACK, (meter, sent)
    finally:
        await service.close()


async def test_a_reply_that_ends_in_its_thinking_is_counted_as_the_next_request_sends_it(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """A reply whose output ran out while it thought holds only its thinking, which no
    request sends back (the API refuses a message ending in thinking): the meter and
    what the next reply teaches leave it out."""
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        for _ in range(3):
            await chat.turn()
        factor = estimator.factor
        thought = thinking_block(prose(4_242, 900), "sig-ran-out")
        fake_anthropic.reply(thought, stop_reason="max_tokens")
        await chat.service.replies.send(chat.sid, "Q4: " + prose(1_004, 120))

        meter, sent = await chat.next_request()

        assert 0 <= meter - sent <= FRAMING_SLACK, (meter, sent)
        assert abs(estimator.factor - 1.0) <= abs(factor - 1.0) + 0.005, estimator.factor
    finally:
        await chat.service.close()


async def test_a_prompt_too_long_teaches_its_size_against_what_the_request_sent(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The API's 'prompt is too long: N tokens' gives the failed request's real size; what
    it teaches compares N with the estimate of that request, without the thinking it left
    out (the kept turns' after a compaction). The API counts as the estimator does here."""
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        for _ in range(6):
            await chat.turn()
        await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
        await chat.turn()  # its reply anchors the count again; the kept thinking stays out
        factor = estimator.factor
        session = chat.service.session(chat.sid)
        prompt = "Next: " + prose(9_999, 40)
        body = request_with_prompt(session, prompt)
        size = raw_size(estimator, body)
        fake_anthropic.prompt_too_long(actual=size, limit=size - 1)

        with pytest.raises(PromptTooLong):
            await chat.service.replies.send(chat.sid, prompt)

        assert fake_anthropic.message_requests()[-1].body["messages"] == body["messages"]
        assert abs(estimator.factor - 1.0) <= abs(factor - 1.0) + 0.005, estimator.factor
    finally:
        await chat.service.close()


async def test_with_the_budget_note_the_meter_counts_the_thinking_that_no_longer_goes(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """A reply made after a request carrying the budget note was made on a prefix no later
    request repeats (the note is not stored): its thinking goes back no more (a model with
    preserved thinking refuses it), and the meter and calibration leave it out. The meter's
    last usage holds that request's note, which the next one does not send."""
    chat = Chat(
        tmp_path, estimator, fake_anthropic, "claude-fable-5-1", budgetNote={"startTokens": 0}
    )
    try:
        for _ in range(4):
            await chat.turn()
        factor = estimator.factor

        meter, sent = await chat.next_request()

        body = fake_anthropic.message_requests()[-1].body
        assert thinking_sent(body) == 0
        note = estimator.count_text(body["messages"][-1]["content"][-1]["text"])
        assert 0 <= meter - (sent - note) <= note + FRAMING_SLACK, (meter, sent, note)
        assert abs(estimator.factor - 1.0) <= abs(factor - 1.0) + 0.01, estimator.factor
    finally:
        await chat.service.close()
