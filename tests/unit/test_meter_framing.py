"""The meter counts each turn's framing once, as the request lays the view out in turns: a
summary and the messages beside it (other summaries, pinned prompts) are one turn of the
request, not one each. Counted per stored message, the meter stood above the request by
the framing of each message that joined a turn, and the calibration, taught from such
requests, learned a factor below 1 that put the meter under the request once the view
held fewer such messages (the meter's random walk's seeds 29, 35, 38, 41 and 45, reduced).

The fake API reports, for each request, the usage of what it was sent (its body counted
as the estimator counts it, at a factor of 1): the meter before a send is compared with
the size of that send's request without its new prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_meter_thinking import Chat

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.view_state import ViewState
from baton.core.usage.draft import Draft
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import framing_not_sent, prose, raw_size


async def pinned_prompts_beside_two_summaries(chat: Chat) -> None:
    """Six turns, `up_to` the fourth prompt, its two prompts left pinned, then `from` the
    reply after the summary: two summaries and the two prompts, side by side."""
    for _ in range(6):
        await chat.turn()
    service, sid = chat.service, chat.sid
    first = CompactRequest(direction="up_to", pivot_message_id=chat.prompts()[3])
    await service.compaction.compact(sid, first)
    for prompt in chat.prompts():
        service.pin(sid, prompt, True)
    after_summary = service.session(sid).view[1]
    second = CompactRequest(direction="from", pivot_message_id=after_summary)
    await service.compaction.compact(sid, second)


async def test_summaries_and_pinned_prompts_side_by_side_frame_one_turn(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        await pinned_prompts_beside_two_summaries(chat)
        view = chat.service.session(chat.sid).view_messages()
        assert [(m.role, m.kind) for m in view] == [("user", "summary")] * 2 + [
            ("user", "message")
        ] * 2

        meter, sent = await chat.next_request()

        assert meter == sent  # 12 above it: three messages' framing the request sends once
    finally:
        await chat.service.close()


async def test_a_factor_taught_by_requests_of_joined_messages_puts_no_meter_under(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The requests after the summaries teach the calibration; the meter after the next
    compaction, an estimate at that factor, is the request's size (it was 3 under)."""
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        await pinned_prompts_beside_two_summaries(chat)
        await chat.next_request()
        await chat.turn()
        assert estimator.factor == 1.0
        result = await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))
        assert result.post_tokens == chat.service.usage(chat.sid).used_tokens

        meter, sent = await chat.next_request()

        assert meter == sent
    finally:
        await chat.service.close()


def _message(
    role: str, *blocks: object, api_id: str | None = None, kind: str = "message"
) -> Message:
    message = Message.model_validate(
        {"role": role, "kind": kind, "content": list(blocks), "apiMessageId": api_id}
    )
    message.tokens = 40 + len(message.content)
    return message


def test_the_tallies_frame_each_turn_once_as_the_request_lays_the_view_out() -> None:
    """Every prefix of a view holding each way stored messages join a turn (or are not
    sent) is counted with one framing per turn of its request (`api_turns`)."""
    thought = ThinkingBlock(thinking="pondering", signature="sig")
    view = [
        _message("user", TextBlock(text="summary so far"), kind="summary"),
        _message("user", TextBlock(text="a restored file"), kind="attachment"),
        _message("user", TextBlock(text="a pinned prompt")),
        _message("assistant", thought, api_id="r1"),  # its text comes as the next record
        _message("assistant", TextBlock(text="answer"), api_id="r1"),
        _message("user", TextBlock(text="read two files")),
        _message("assistant", ToolUseBlock(id="t1", name="Read", input={}), api_id="r2"),
        _message("user", ToolResultBlock(tool_use_id="t1", content="one")),
        _message("assistant", ToolUseBlock(id="t2", name="Read", input={}), api_id="r2"),
        _message("user", ToolResultBlock(tool_use_id="t2", content="two")),
        _message("user", TextBlock(text="and now?")),
        _message("assistant", thought, api_id="r3"),  # ran out while it thought: not sent
        _message("user", TextBlock(text="   ")),  # blank: not sent
        _message("user", TextBlock(text="again")),
        _message("assistant", TextBlock(text="first"), api_id="r4"),
        _message("assistant", TextBlock(text="second"), api_id="r5"),
    ]
    state = ViewState(view)
    for stop in range(len(view) + 1):
        stored = sum(m.tokens for m in view[:stop])
        sent = stored - framing_not_sent(view[:stop])
        assert state.tokens(0, stop, lambda i: 0) == sent, stop
    assert sum(state.by_kind.values()) == state.tokens(0, len(view), lambda i: 0)


@pytest.mark.parametrize("last", ["reply", "summaries"])
async def test_a_draft_is_counted_as_the_request_that_sends_it(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, last: str
) -> None:
    """A draft's usage is the size of the request that sends it. After a view that ends in
    the user's turn (summaries and pinned prompts left last), the prompt joins that turn:
    its framing is not sent, and the draft stood 4 tokens above the request."""
    chat = Chat(tmp_path, estimator, fake_anthropic)
    try:
        if last == "summaries":
            await pinned_prompts_beside_two_summaries(chat)
        else:
            for _ in range(3):
                await chat.turn()
        prompt = "Next: " + prose(9_999, 40)
        drafted = await chat.service.draft_usage(chat.sid, Draft(text=prompt))
        before = len(fake_anthropic.message_requests())
        fake_anthropic.reply("Done.")
        await chat.service.replies.send(chat.sid, prompt)

        body = fake_anthropic.message_requests()[before].body
        assert drafted.used_tokens == raw_size(estimator, body)
    finally:
        await chat.service.close()
