"""The `server` summarizer against the fake API: the block, where it goes, every fallback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from conversations import Convo, reload

from baton.core.compaction.engine import CompactContext, compact, uncompact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.api_compaction import ServerSummarizer
from baton.core.compaction.summary.model_summary import as_text_messages
from baton.core.compaction.summary.summarizers import Progress, SummaryRequest
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import CompactionBlock, Message, MessageInput, text_message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import ApiError, InvalidParams, NothingToCompact
from baton.core.model_api.api_messages import api_block, to_api_messages
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.fake_compaction import BETA

MODEL = "claude-sonnet-4-6"  # the fake's Models API lists compaction for it
OTHER = "claude-sonnet-4-5"  # and not for this one
SYSTEM = "You are a careful coding assistant."


class TextFallback:
    """Baton's own summary in these tests: a fixed body, every request recorded."""

    name = "anthropic"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        self.requests.append(request)
        return "## 1. Primary request and intent\nBaton's own summary."


def settings() -> Settings:
    out = Settings(model=MODEL)
    out.keep_window = KeepWindowSettings(min_tokens=1, min_text_messages=2, max_tokens=10_000)
    return out


def conversation(store: SessionStore, model: str = MODEL, turns: int = 4) -> tuple[Session, Convo]:
    convo = Convo(tokens=0)
    for n in range(turns):
        convo.user(f"question number {n}")
        if n == 1:
            convo.tools("Read", inputs=[{"file_path": "/src/app.py"}])
        convo.reply(f"answer number {n}")
    session = store.create(title="t", model=model, system_prompt=SYSTEM)
    session.append(convo.messages)
    return session, convo


def context(
    estimator: Estimator, client: AnthropicClient, *, explicit: bool = True
) -> tuple[CompactContext, TextFallback]:
    fallback = TextFallback()
    summarizer = ServerSummarizer(client, fallback, explicit=explicit)
    return CompactContext(settings=settings(), estimator=estimator, summarizer=summarizer), fallback


def compaction_requests(fake: FakeAnthropic) -> list[dict[str, Any]]:
    return [r.body for r in fake.message_requests() if "compaction" in (r.body or {})]


ClientMaker = Callable[..., AnthropicClient]


@dataclass
class Api:
    """The fake Messages API and what a compaction through it needs, together."""

    fake: FakeAnthropic
    client: ClientMaker
    store: SessionStore
    estimator: Estimator

    def chat(self, model: str = MODEL, turns: int = 4) -> tuple[Session, Convo]:
        return conversation(self.store, model, turns)

    def context(
        self, client: AnthropicClient, *, explicit: bool = True
    ) -> tuple[CompactContext, TextFallback]:
        return context(self.estimator, client, explicit=explicit)


@pytest.fixture
def api(
    fake_anthropic: FakeAnthropic,
    anthropic_client: ClientMaker,
    store: SessionStore,
    estimator: Estimator,
) -> Api:
    return Api(fake_anthropic, anthropic_client, store, estimator)


async def test_up_to_stores_the_api_block_first_and_the_ledger_after_the_kept_turns(
    api: Api,
) -> None:
    session, convo = api.chat()
    pivot = convo.messages[5].id  # the answer after the Read call
    ctx, fallback = api.context(api.client())
    result = await compact(session, CompactRequest(direction="up_to", pivot_message_id=pivot), ctx)

    assert result.summarizer == "server" and result.warnings == [] and fallback.requests == []
    [sent] = compaction_requests(api.fake)
    assert sent["compaction"] == {"type": "summarize"} and sent["system"] == SYSTEM
    assert sent["model"] == MODEL
    assert sent["messages"] == to_api_messages(convo.messages[:6])
    request = next(r for r in api.fake.message_requests() if r.body is sent)
    assert BETA in request.headers["anthropic-beta"]

    view = session.view_messages()
    [issued] = api.fake.compaction.issued
    summary = view[0]
    assert summary.role == "assistant" and summary.kind == "summary"
    assert [b.model_dump(exclude_none=True) for b in summary.content] == [issued]
    assert result.summary == issued["content"]
    kept = [m.id for m in convo.messages[6:]]
    assert [m.id for m in view[1 : 1 + len(kept)]] == kept  # nothing between block and kept
    note = view[-1]
    assert note.kind == "attachment" and str(session.transcript.path) in note.text()
    assert invariant_violations(view) == []
    # the block survives a reload byte for byte, and goes back first, as returned
    again = reload(session).view_messages()
    assert again[0].content[0].model_dump(exclude_none=True) == issued
    assert to_api_messages(again)[0] == {"role": "assistant", "content": [issued]}


async def test_a_later_reply_carries_the_block_with_the_beta_header_and_the_fake_verifies_it(
    api: Api,
) -> None:
    session, _ = api.chat()
    client = api.client()
    ctx, _ = api.context(client)
    await compact(session, CompactRequest(direction="all"), ctx)
    payload = to_api_messages(session.view_messages())
    api.fake.reply("Next answer")
    reply = await client.stream_reply(
        model=MODEL, system=SYSTEM, messages=payload, tools=None, max_tokens=100
    )
    assert reply.content[0].model_dump()["text"] == "Next answer"
    last = api.fake.message_requests()[-1]
    assert BETA in last.headers["anthropic-beta"]
    assert last.body["messages"][0]["content"][0]["type"] == "compaction"

    tampered = [dict(turn) for turn in payload]
    tampered[0] = {"role": "assistant", "content": [{**payload[0]["content"][0], "content": "x"}]}
    with pytest.raises(ApiError) as failed:
        await client.stream_reply(
            model=MODEL, system=SYSTEM, messages=tampered, tools=None, max_tokens=100
        )
    assert failed.value.data["status"] == 400
    misplaced = [{"role": "user", "content": "earlier"}, *payload]
    with pytest.raises(ApiError):
        await client.stream_reply(
            model=MODEL, system=SYSTEM, messages=misplaced, tools=None, max_tokens=100
        )


@pytest.mark.parametrize("direction", ["from", "range"])
async def test_from_and_range_fall_back_to_batons_own_summary_and_say_so(
    direction: str,
    api: Api,
) -> None:
    session, convo = api.chat()
    request = CompactRequest(
        direction=direction,  # type: ignore[arg-type]
        pivot_message_id=convo.messages[2].id,
        end_message_id=convo.messages[5].id if direction == "range" else None,
    )
    ctx, fallback = api.context(api.client())
    dry = await compact(session, replace(request, dry_run=True), ctx)
    assert dry.summarizer == "anthropic"  # what the real run will use
    result = await compact(session, request, ctx)
    assert result.summarizer == "anthropic" and len(fallback.requests) == 1
    assert len(result.warnings) == 1 and f"`{direction}`" in result.warnings[0]
    assert compaction_requests(api.fake) == []
    blocks = [b for m in session.view_messages() for b in m.content]
    assert not any(isinstance(b, CompactionBlock) for b in blocks)


async def test_auto_uses_the_api_where_the_models_api_lists_it_and_quietly_not_elsewhere(
    api: Api,
) -> None:
    client = api.client()
    listed, _ = api.chat(MODEL)
    ctx, _ = api.context(client, explicit=False)
    assert (await compact(listed, CompactRequest(), ctx)).summarizer == "server"

    unlisted, _ = api.chat(OTHER)
    ctx, fallback = api.context(client, explicit=False)
    result = await compact(unlisted, CompactRequest(), ctx)
    assert result.summarizer == "anthropic" and result.warnings == [] and fallback.requests
    assert len(compaction_requests(api.fake)) == 1
    asked = {
        r.path
        for r in api.fake.requests
        if r.path.startswith("/v1/models/") and BETA in r.headers.get("anthropic-beta", "")
    }
    assert asked == {f"/v1/models/{MODEL}", f"/v1/models/{OTHER}"}


async def test_an_explicit_server_on_an_unlisted_model_falls_back_with_a_warning(
    api: Api,
) -> None:
    session, _ = api.chat(OTHER)
    ctx, _ = api.context(api.client())
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "anthropic" and OTHER in result.warnings[0]
    assert compaction_requests(api.fake) == []


@pytest.mark.parametrize("explicit", [True, False])
async def test_a_span_longer_than_the_models_window_falls_back_without_asking_the_api(
    explicit: bool, api: Api
) -> None:
    # the API reads the span whole: over the window it refuses it (or, over 32 MB, its
    # bytes), after the request went up; a pasted 50 MB log sent 62 MB so
    session, _ = api.chat()
    api.fake.models[MODEL] = {"max_input_tokens": 20, "max_tokens": 64_000}  # it counts more
    ctx, fallback = api.context(api.client(), explicit=explicit)
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "anthropic" and len(fallback.requests) == 1
    assert compaction_requests(api.fake) == []
    if explicit:
        assert "more than" in result.warnings[0] and "(20)" in result.warnings[0]
    else:
        assert result.warnings == []


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (lambda fake: fake.compaction.fail("compaction_unavailable", times=3), "unavailable"),
        (lambda fake: fake.compaction.no_summary("max_tokens"), "max_tokens"),
        (lambda fake: fake.compaction.no_summary("refusal"), "refusal"),
        (lambda fake: fake.compaction.fail("compaction_signature_invalid"), "signature_invalid"),
    ],
)
async def test_documented_failures_end_in_batons_own_summary_with_the_reason(
    script: Callable[[FakeAnthropic], None],
    said: str,
    api: Api,
) -> None:
    session, _ = api.chat()
    script(api.fake)
    ctx, fallback = api.context(api.client(max_retries=2))
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "anthropic" and len(fallback.requests) == 1
    assert said in result.warnings[0]
    assert session.view_messages()[0].role == "user"  # Baton's text summary
    assert api.fake.compaction.issued == []


async def test_nothing_to_summarize_is_a_clean_error_that_commits_nothing(
    api: Api,
) -> None:
    session, _ = api.chat()
    before = list(session.view)
    lines = session.transcript.path.read_bytes()
    api.fake.compaction.fail("compaction_nothing_to_summarize")
    ctx, fallback = api.context(api.client())
    with pytest.raises(NothingToCompact):
        await compact(session, CompactRequest(), ctx)
    assert session.view == before and session.transcript.path.read_bytes() == lines
    assert fallback.requests == []


async def test_compacting_again_sends_the_old_block_first_and_undo_restores_each_step(
    api: Api,
) -> None:
    session, _ = api.chat(turns=6)
    original = list(session.view)
    ctx, _ = api.context(api.client())
    await compact(session, CompactRequest(), ctx)
    after_first = list(session.view)
    session.append([text_message("user", "more")])
    second = await compact(session, CompactRequest(), ctx)
    assert second.summarizer == "server"
    first_block, second_block = api.fake.compaction.issued
    sent = compaction_requests(api.fake)[1]["messages"]
    assert sent[0]["content"][0] == first_block  # compact again: the old block leads
    assert session.view_messages()[0].content[0].model_dump(exclude_none=True) == second_block

    uncompact(session)
    assert session.view[: len(after_first)] == after_first
    uncompact(session)
    assert session.view[: len(original)] == original


async def test_a_block_the_api_refuses_on_compacting_again_falls_back(
    api: Api,
) -> None:
    session, _ = api.chat(turns=6)
    ctx, fallback = api.context(api.client())
    await compact(session, CompactRequest(), ctx)
    block = session.view_messages()[0].content[0]
    assert isinstance(block, CompactionBlock)
    block.content = "a summary someone edited"
    session.append([text_message("user", "more")])
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "anthropic" and "compaction_content_mismatch" in result.warnings[0]
    # Baton's own summarizer gets the old summary, and the model summarizer reads it as text
    first = fallback.requests[0].messages[0]
    assert first.role == "assistant" and "a summary someone edited" in first.text()
    assert "a summary someone edited" in as_text_messages([first])[0].text()


async def test_a_prompt_the_api_summary_left_out_is_in_the_ledger_after_the_kept_turns(
    api: Api,
) -> None:
    session, _ = api.chat()
    api.fake.compaction.summary("The user asked some questions.")
    ctx, _ = api.context(api.client())
    result = await compact(session, CompactRequest(), ctx)
    figures = result.retention
    assert figures is not None and figures.prompts.kept < figures.prompts.total
    note = session.view_messages()[-1]
    assert note.kind == "attachment" and "question number 0" in note.text()


def test_a_compaction_block_goes_back_with_every_field_it_came_with() -> None:
    raw = {
        "type": "compaction",
        "content": "summary",
        "signature": "sig",
        "encrypted_content": "opaque",
        "tool_changes": [],
    }
    block = CompactionBlock.model_validate(raw)
    assert api_block(block) == raw
    assert api_block(CompactionBlock(content=None, signature="sig")) is None
    message = Message(role="assistant", kind="summary", content=[block])
    assert invariant_violations([message]) == []
    assert invariant_violations([text_message("assistant", "a")])


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_client_cannot_append_a_compaction_block(role: str, store: SessionStore) -> None:
    session = store.create(title="t")
    session.append([MessageInput(role="user", content="hi")])
    block = CompactionBlock(content="forged summary", signature="sig")
    with pytest.raises(InvalidParams):
        session.append([MessageInput(role=role, content=[block])])  # type: ignore[arg-type]
    assert len(session.view) == 1


async def test_count_tokens_of_a_view_with_the_block_carries_the_beta_header(
    fake_anthropic: FakeAnthropic, anthropic_client: ClientMaker
) -> None:
    client = anthropic_client()
    block = {"type": "compaction", "content": "summary", "signature": "sig"}
    plain = [{"role": "user", "content": "hi"}]
    await client.count_tokens(model=MODEL, system=None, messages=plain)
    await client.count_tokens(
        model=MODEL, system=None, messages=[{"role": "assistant", "content": [block]}, *plain]
    )
    without, with_block = fake_anthropic.requests[-2:]
    assert BETA not in without.headers.get("anthropic-beta", "")
    assert BETA in with_block.headers["anthropic-beta"]


async def test_standing_instructions_go_in_the_api_compactions_instructions_and_the_ledger(
    api: Api,
) -> None:
    session = api.store.create(title="rules", model=MODEL, system_prompt=SYSTEM)
    convo = Convo(tokens=0)
    convo.user("Refactor the loader. Don't touch the migrations.")
    convo.reply("ok")
    for n in range(3):
        convo.user(f"question number {n}")
        convo.reply(f"answer number {n}")
    session.append(convo.messages)
    api.fake.compaction.summary("The user asked some questions.")
    ctx, _ = api.context(api.client())
    result = await compact(session, CompactRequest(), ctx)
    sent = compaction_requests(api.fake)[-1]["compaction"]
    assert "Don't touch the migrations." in sent["instructions"]
    assert "Standing instructions from the user (verbatim):" in sent["instructions"]
    assert result.retention is not None and result.retention.instructions is not None
    assert result.retention.instructions.kept == 0  # the fake's summary dropped it: ledger
    note = session.view_messages()[-1]
    assert '"Don\'t touch the migrations."' in note.text()
