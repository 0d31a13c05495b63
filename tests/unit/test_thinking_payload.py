"""Thinking across compactions: which thinking goes back, checked by the fake API's rules."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from baton.cli.main import main as cli_main
from baton.core.compaction.automatic.microcompact import microcompact
from baton.core.compaction.engine import CompactContext, compact, uncompact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import ApiError
from baton.core.model_api.client import AnthropicClient, to_api_messages
from baton.core.model_api.reply_request import build_payload
from baton.core.settings import (
    BudgetNoteSettings,
    KeepWindowSettings,
    MicrocompactSettings,
    Settings,
)
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

MakeClient = Callable[..., AnthropicClient]
SYSTEM = "You are a careful assistant."
CHECKING = "claude-fable-5-1"  # preserved thinking: a changed prefix is a 400
IGNORING = "claude-sonnet-4-5"  # no prefix check: thinking with a changed prefix is dropped


def settings(thinking: str | int | None) -> Settings:
    return Settings(
        thinking=thinking,
        keep_window=KeepWindowSettings(min_tokens=0, min_text_messages=2, max_tokens=100_000),
    )


async def tool_round(
    session: Session, fake: FakeAnthropic, ctx: ChatContext, n: int, *, close: bool = True
) -> None:
    """A prompt, a Read call and its result, then (with `close`) the final answer."""
    use = tool_use_block("Read", {"file_path": f"src/f{n}.py"}, id=f"toolu_{n}")
    fake.reply(use, stop_reason="tool_use", usage={"input_tokens": 500, "output_tokens": 20})
    await send(session, content=f"Please look at f{n}.py", tools=None, ctx=ctx)
    result = ToolResultBlock(tool_use_id=f"toolu_{n}", content=f"def f{n}(): pass\n" * 40)
    session.append([MessageInput(role="user", content=[result])])
    if close:
        fake.reply(f"f{n}.py defines f{n}.", usage={"input_tokens": 900, "output_tokens": 20})
        await send(session, content=None, tools=None, ctx=ctx)


def thinking_in(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the payload's assistant turns that carry thinking."""
    return [
        i
        for i, turn in enumerate(messages)
        if turn["role"] == "assistant" and any(b["type"] == "thinking" for b in turn["content"])
    ]


@dataclass
class Talk:
    """Chats against the fake Messages API: the fixtures every test here uses, together."""

    fake: FakeAnthropic
    client: MakeClient
    store: SessionStore
    estimator: Estimator

    def chat(self, config: Settings, client: AnthropicClient | None = None) -> ChatContext:
        return ChatContext(
            settings=config, estimator=self.estimator, client=client or self.client()
        )

    async def conversation(self, ctx: ChatContext, model: str, rounds: int = 4) -> Session:
        session = self.store.create("thinking", model, SYSTEM)
        for n in range(rounds):
            await tool_round(session, self.fake, ctx, n)
        return session

    def compacting(self, config: Settings) -> CompactContext:
        return CompactContext(
            settings=config,
            estimator=self.estimator,
            summarizer=ExtractiveSummarizer(self.estimator.count_text),
        )

    async def accepts_next_turn(
        self,
        session: Session,
        ctx: ChatContext,
        content: str,
        tools: list[dict[str, Any]] | None = None,
        reply: str = "Fine.",
    ) -> None:
        """One more turn, which the API takes: nothing stale was sent back."""
        self.fake.reply(reply)
        await send(session, content=content, tools=tools, ctx=ctx)
        assert self.fake.thinking.dropped == []


@pytest.fixture
def talk(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> Talk:
    return Talk(fake_anthropic, anthropic_client, store, estimator)


# ---- the request parameter ------------------------------------------------------------


async def test_every_reply_thinks_and_its_thinking_goes_back_while_the_prefix_holds(
    talk: Talk,
) -> None:
    ctx = talk.chat(settings("adaptive"))
    session = await talk.conversation(ctx, CHECKING, rounds=2)
    last = talk.fake.message_requests()[-1].body
    assert last["thinking"] == {"type": "adaptive"}
    assert last["system"] == SYSTEM
    # every earlier assistant turn went back with the thinking the fake served it
    assert thinking_in(last["messages"]) == [1, 3, 5]
    assert all(m.prefix_hash for m in session.view_messages() if m.role == "assistant")
    assert talk.fake.thinking.dropped == []


@pytest.mark.parametrize(
    ("model", "setting", "expected"),
    [
        ("claude-opus-5-5", "adaptive", {"type": "adaptive"}),
        ("claude-opus-5-5", 8000, {"type": "adaptive"}),  # takes no budget
        ("claude-opus-5-5", "off", None),  # cannot be disabled: nothing sent
        ("claude-opus-5", "off", {"type": "disabled"}),
        ("claude-sonnet-4-6", 8000, {"type": "enabled", "budget_tokens": 8000}),
        ("claude-sonnet-4-5", "adaptive", {"type": "enabled", "budget_tokens": 16_000}),
        ("claude-sonnet-4-5", 50_000, {"type": "enabled", "budget_tokens": 31_999}),
        ("claude-sonnet-4-5", None, None),
    ],
)
async def test_the_setting_is_sent_in_the_form_the_model_takes(
    talk: Talk,
    model: str,
    setting: str | int | None,
    expected: dict[str, Any] | None,
) -> None:
    talk.fake.models[model] = {"max_input_tokens": 200_000, "max_tokens": 64_000}
    ctx = talk.chat(settings(setting))
    session = talk.store.create("t", model, SYSTEM)
    await send(session, content="Hello", tools=None, ctx=ctx)  # the fake refuses bad forms
    assert talk.fake.message_requests()[-1].body.get("thinking") == expected


# ---- every direction changes the prefix of what it keeps -------------------------------

DIRECTIONS = ["all", "up_to", "range", "from"]


def request_for(direction: str, session: Session) -> CompactRequest:
    view = session.view_messages()
    if direction == "all":
        return CompactRequest(direction="all")
    if direction == "up_to":
        return CompactRequest(direction="up_to", pivot_message_id=view[3].id)
    if direction == "from":
        return CompactRequest(direction="from", pivot_message_id=view[8].id)
    return CompactRequest(direction="range", pivot_message_id=view[4].id, end_message_id=view[7].id)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize(("model", "setting"), [(CHECKING, "adaptive"), ("claude-opus-5", "off")])
async def test_after_a_compaction_kept_turns_go_without_their_thinking_and_the_api_accepts(
    talk: Talk,
    direction: str,
    model: str,
    setting: str,
) -> None:
    talk.fake.models[model] = {"max_input_tokens": 200_000, "max_tokens": 64_000}
    config = settings(setting)
    client = talk.client()
    ctx = talk.chat(config, client)
    session = await talk.conversation(ctx, model)
    before = build_payload(session.view_messages(), SYSTEM, None)
    result = await compact(session, request_for(direction, session), talk.compacting(config))
    after = build_payload(session.view_messages(), SYSTEM, None)
    view = session.view_messages()
    first_new = next(i for i, m in enumerate(view) if m.kind != "message")
    before_change = [m.id for m in view[:first_new] if m.role == "assistant"]
    after_change = [m.id for m in view[first_new:] if m.role == "assistant" and m.kind == "message"]
    if setting == "off":
        assert thinking_in(before.messages) == thinking_in(after.messages) == []
    else:
        # thinking stays exactly where nothing before it changed (`from` keeps its prefix,
        # `range` what precedes the span); every kept turn after the summary goes without
        assert set(after.omitted) == set(after_change)
        assert bool(after_change) == (direction != "from")  # `from` keeps nothing after it
        assert len(thinking_in(after.messages)) == len(before_change)
        assert set(after_change) <= set(result.kept_message_ids)
    talk.fake.reply("Continuing.")
    await send(session, content="And now?", tools=None, ctx=ctx)  # a 400 would raise
    sent = talk.fake.message_requests()[-1].body
    replies = [t for t in sent["messages"] if t["role"] == "assistant"]
    assert replies == [t for t in after.messages if t["role"] == "assistant"]
    assert sent["system"] == SYSTEM  # the system prompt is never rewritten
    assert talk.fake.thinking.dropped == []


@pytest.mark.parametrize("direction", ["all", "up_to", "range"])
async def test_the_fake_refuses_the_kept_thinking_a_naive_payload_would_send(
    talk: Talk,
    direction: str,
) -> None:
    config = settings("adaptive")
    client = talk.client()
    session = await talk.conversation(talk.chat(config, client), CHECKING)
    await compact(session, request_for(direction, session), talk.compacting(config))
    naive = to_api_messages([*session.view_messages()])
    naive.append({"role": "user", "content": [{"type": "text", "text": "And now?"}]})
    with pytest.raises(ApiError) as caught:
        await client.stream_reply(
            model=CHECKING,
            system=SYSTEM,
            messages=naive,
            tools=None,
            max_tokens=4096,
            thinking={"type": "adaptive"},
        )
    assert caught.value.data.get("status") == 400
    assert "bound to a different conversation" in caught.value.message


async def test_undo_brings_the_original_thinking_back(
    talk: Talk,
) -> None:
    config = settings("adaptive")
    ctx = talk.chat(config)
    session = await talk.conversation(ctx, CHECKING)
    before = build_payload(session.view_messages(), SYSTEM, None)
    await compact(session, request_for("up_to", session), talk.compacting(config))
    uncompact(session)
    assert build_payload(session.view_messages(), SYSTEM, None).messages == before.messages
    talk.fake.reply("Back.")
    await send(session, content="Again?", tools=None, ctx=ctx)


@pytest.mark.parametrize("thinking", ["adaptive", None])
async def test_microcompact_clears_results_and_the_thinking_after_them_stays_out(
    talk: Talk,
    thinking: str | None,
) -> None:
    model = CHECKING if thinking else "claude-opus-5"
    talk.fake.models[model] = {"max_input_tokens": 200_000, "max_tokens": 64_000}
    config = settings(thinking)
    ctx = talk.chat(config)
    session = await talk.conversation(ctx, model, rounds=4)
    later = datetime.now(UTC) + timedelta(hours=2)
    boundary = microcompact(session, MicrocompactSettings(keep_recent=2), now=later)
    assert boundary is not None
    after = build_payload(session.view_messages(), SYSTEM, None)
    if thinking:
        # rounds 0 and 1 lost their results: the first round's call turn keeps its
        # thinking (nothing before it changed), everything after the first cleared one not
        assert thinking_in(after.messages) == [1]
    else:
        assert thinking_in(after.messages) == []
    await talk.accepts_next_turn(session, ctx, "Go on")


async def test_changed_tools_keep_thinking_out_and_a_model_that_ignores_gets_none_either(
    talk: Talk,
) -> None:
    ctx = talk.chat(settings("adaptive"))
    session = await talk.conversation(ctx, IGNORING, rounds=2)
    tools = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]
    payload = build_payload(session.view_messages(), SYSTEM, tools)
    assert thinking_in(payload.messages) == [] and len(payload.omitted) == 4
    await talk.accepts_next_turn(session, ctx, "With tools now", tools=tools, reply="Sure.")


# ---- the turn in progress --------------------------------------------------------------


async def test_a_compaction_inside_a_tool_loop_keeps_the_turn_in_progress_as_received(
    talk: Talk,
) -> None:
    config = settings("adaptive")
    ctx = talk.chat(config)
    session = await talk.conversation(ctx, CHECKING, rounds=3)
    await tool_round(session, talk.fake, ctx, 9, close=False)
    in_progress = session.view_messages()[-2]
    await compact(session, CompactRequest(direction="all"), talk.compacting(config))
    payload = build_payload(session.view_messages(), SYSTEM, None)
    assert payload.stale_in_progress
    assert payload.messages[-2]["content"][0]["signature"] == in_progress.content[0].signature
    talk.fake.reply("Done with f9.")
    await send(session, content=None, tools=None, ctx=ctx)
    sent = talk.fake.message_requests()[-1]
    assert sent.body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert "thinking-binding-controls" in sent.headers["anthropic-beta"]
    # the API dropped only what was stale; Baton sent nothing else it had to drop
    assert talk.fake.thinking.dropped == [in_progress.content[0].signature]


async def test_the_fake_refuses_a_tool_loop_turn_without_its_thinking_and_edited_thinking(
    talk: Talk,
) -> None:
    client = talk.client()
    ctx = talk.chat(settings("adaptive"), client)
    session = await talk.conversation(ctx, CHECKING, rounds=1)
    await tool_round(session, talk.fake, ctx, 5, close=False)
    good = build_payload(session.view_messages(), SYSTEM, None).messages
    stripped = [dict(t) for t in good]
    stripped[-2] = {"role": "assistant", "content": stripped[-2]["content"][1:]}
    edited = [dict(t) for t in good]
    block = {**edited[-2]["content"][0], "thinking": "something else"}
    edited[-2] = {"role": "assistant", "content": [block, *edited[-2]["content"][1:]]}
    for messages, words in ((stripped, "must start with a thinking block"), (edited, "modified")):
        with pytest.raises(ApiError) as caught:
            await client.stream_reply(
                model=CHECKING,
                system=SYSTEM,
                messages=messages,
                tools=None,
                max_tokens=4096,
                thinking={"type": "adaptive"},
            )
        assert words in caught.value.message


async def test_baton_payload_shows_which_thinking_the_next_request_sends(
    talk: Talk,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = settings("adaptive")
    ctx = talk.chat(config)
    session = await talk.conversation(ctx, CHECKING, rounds=2)
    path = str(session.transcript.path)

    def rows() -> list[dict[str, Any]]:
        capsys.readouterr()
        assert cli_main(["payload", path, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["request"]["system"] == SYSTEM
        return list(out["thinking"])

    assert [r["sent"] for r in rows()] == [True] * 4
    await compact(session, request_for("up_to", session), talk.compacting(config))
    after = rows()
    assert after and not any(r["sent"] for r in after)
    assert {r["origin"] for r in after} == {"reply"}


async def test_redacted_thinking_goes_back_whole_and_stays_out_after_a_compaction(
    talk: Talk,
) -> None:
    config = settings("adaptive")
    ctx = talk.chat(config)
    session = talk.store.create("redacted", CHECKING, SYSTEM)
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
    for n in range(4):
        talk.fake.reply(dict(redacted, data=f"{redacted['data']}{n}"), f"Answer {n}.")
        await send(session, content=f"Question {n}?", tools=None, ctx=ctx)
    last = talk.fake.message_requests()[-1].body["messages"]
    sent = [b for t in last if t["role"] == "assistant" for b in t["content"]]
    assert [b["type"] for b in sent] == ["redacted_thinking", "text"] * 3
    assert sent[0] == dict(redacted, data=f"{redacted['data']}0")  # exactly as received
    await compact(session, CompactRequest(direction="all"), talk.compacting(config))
    after = build_payload(session.view_messages(), SYSTEM, None)
    assert not any(b["type"] == "redacted_thinking" for t in after.messages for b in t["content"])
    await talk.accepts_next_turn(session, ctx, "Next?")


async def test_with_the_setting_unset_a_model_that_always_thinks_keeps_its_tool_loop_whole(
    talk: Talk,
) -> None:
    talk.fake.thinking.default_on = True  # as the API: this model thinks unasked
    model = "claude-sonnet-5-5"
    config = settings(None)
    ctx = talk.chat(config)
    session = await talk.conversation(ctx, model, rounds=2)
    assert "thinking" not in talk.fake.message_requests()[-1].body
    assert all(
        m.content[0].type == "thinking" for m in session.view_messages() if m.role == "assistant"
    )
    await tool_round(session, talk.fake, ctx, 7, close=False)
    await compact(session, CompactRequest(direction="all"), talk.compacting(config))
    talk.fake.reply("f7.py defines f7.")
    await send(session, content=None, tools=None, ctx=ctx)  # would be a 400 without drop_block
    sent = talk.fake.message_requests()[-1]
    assert sent.body["thinking"]["type"] == "adaptive"
    assert len(talk.fake.thinking.dropped) == 1


async def test_a_model_without_the_prefix_check_drops_stale_thinking_without_an_error(
    talk: Talk,
) -> None:
    config = settings("adaptive")
    client = talk.client()
    session = await talk.conversation(talk.chat(config, client), IGNORING)
    await compact(session, request_for("up_to", session), talk.compacting(config))
    naive = to_api_messages(session.view_messages())
    naive.append({"role": "user", "content": [{"type": "text", "text": "And now?"}]})
    stale = [b["signature"] for t in naive for b in t["content"] if b["type"] == "thinking"]
    await client.stream_reply(
        model=IGNORING,
        system=SYSTEM,
        messages=naive,
        tools=None,
        max_tokens=20_000,
        thinking={"type": "enabled", "budget_tokens": 16_000},
    )
    assert stale and talk.fake.thinking.dropped == stale


@pytest.mark.parametrize("prefix", ["not-this-prefix", None])
def test_a_turn_of_thinking_alone_goes_and_its_neighbours_merge(prefix: str | None) -> None:
    thinking = ThinkingBlock(thinking="hmm", signature="sig-1")
    view = [
        Message(role="user", content=[TextBlock(text="first")]),
        Message(role="assistant", content=[thinking], prefix_hash=prefix),
        Message(role="user", content=[TextBlock(text="second")]),
    ]
    if prefix is None:  # its prefix as the payload will be: the turn sent as it is
        view[1].prefix_hash = build_payload(view[:1], SYSTEM, None).prefix_hash
    payload = build_payload(view, SYSTEM, None)
    assert payload.messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        }
    ]
    # it ends in thinking, which no request sends (the API refuses it), whatever its prefix
    assert payload.omitted == []


@pytest.mark.parametrize(
    "content",
    [
        ["thinking"],  # output ran out while it thought
        ["thinking", "   "],  # its text block holds only blanks, which no request sends
    ],
)
async def test_a_reply_that_ends_in_its_thinking_never_makes_a_request_the_api_refuses(
    talk: Talk, content: list[str]
) -> None:
    # the API refuses any assistant message whose last block is thinking ("messages.1:
    # The final block in an assistant message cannot be `thinking`"), wherever it stands
    ctx = talk.chat(settings("adaptive"))
    session = talk.store.create("thinking", CHECKING, SYSTEM)
    blocks: list[str | dict[str, Any]] = [
        {"type": "thinking", "thinking": "Let me see.", "signature": "sig-ends"}
        if kind == "thinking"
        else kind
        for kind in content
    ]
    talk.fake.reply(*blocks, stop_reason="max_tokens")
    await send(session, content="Think about it.", tools=None, ctx=ctx)
    await talk.accepts_next_turn(session, ctx, "And now?")

    sent = talk.fake.message_requests()[-1].body["messages"]
    assert [turn["role"] for turn in sent] == ["user"]  # the turn had nothing else to send
    assert [b["text"] for b in sent[0]["content"]] == ["Think about it.", "And now?"]
    assert session.view_messages()[1].content[0].type == "thinking"  # kept as received


async def test_the_budget_note_never_makes_a_request_send_thinking_bound_to_another_prefix(
    talk: Talk,
) -> None:
    # the note is the last text of the request's last user turn and is never stored: the
    # next request sends that turn without it, so a reply made after it was made on a
    # prefix no later request repeats (a model with preserved thinking checks it: a 400)
    config = settings("adaptive").model_copy(
        update={"budget_note": BudgetNoteSettings(start_tokens=0)}
    )
    ctx = talk.chat(config)
    session = await talk.conversation(ctx, CHECKING, rounds=2)  # a tool loop in each
    talk.fake.reply("Fine.")
    await send(session, content="And now?", tools=None, ctx=ctx)  # the API takes each one

    requests = [r.body for r in talk.fake.message_requests()]
    assert len(requests) == 5
    assert all("<system_warning>" in json.dumps(r["messages"][-1]) for r in requests)
    # a loop's next step sends its turn in progress as received, asking the API to drop
    # the thinking whose prefix the note's move changed; a closed turn goes without it
    steps = [r for r in requests if r["messages"][-1]["content"][0]["type"] == "tool_result"]
    assert len(steps) == 2 and all(r["thinking"].get("block_binding") for r in steps)
    calls = [m for m in session.view_messages() if m.tool_uses()]
    assert talk.fake.thinking.dropped == [m.content[0].signature for m in calls]  # type: ignore[union-attr]
    assert thinking_in(requests[-1]["messages"]) == []
