"""Compaction drafts against the fake API: every summarizer gives the commit's sizes, an
edited summary is what the next request sends, and the cost figures match the usage the
(simulated) prompt cache reports for the next request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from test_compaction_drafts import conversation

from baton.core.compaction.prompts import SUMMARY_SYSTEM
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.notes import MemoryNotes, NotesMark, notes_path
from baton.core.conversation.messages import Message
from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.cl100k import Encoder
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.fake_cache import PromptCache

FAKE_KEY = "sk-ant-test-SECRET-123"
MODEL = "claude-sonnet-4-6"  # the fake's Models API lists compaction for it
SUMMARY = (
    "<analysis>read it all</analysis><summary>## 1. Primary request and intent\n"
    "The user had modules m0 to m9 fixed one by one.</summary>"
)
SYSTEM = "You are a careful coding assistant working in a Python repository."


def _settings(tmp_path: Path, summarizer: str) -> Settings:
    return Settings(
        data_dir=str(tmp_path / "data"),
        model=MODEL,
        summarizer=summarizer,  # type: ignore[arg-type]
        keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
    )


@pytest.fixture
async def make_service(tmp_path: Path, fake_anthropic: FakeAnthropic) -> AsyncIterator[Any]:
    made: list[BatonService] = []
    fake_anthropic.default_text = SUMMARY

    def make(summarizer: str, estimator: Estimator | None = None) -> BatonService:
        service = BatonService(
            _settings(tmp_path, summarizer), api_key=FAKE_KEY, estimator=estimator
        )
        made.append(service)
        return service

    yield make
    for service in made:
        await service.close()


def _request(view: list[str], direction: str) -> CompactRequest:
    if direction == "all":
        return CompactRequest("all")
    if direction == "up_to":
        return CompactRequest("up_to", view[len(view) // 2])
    if direction == "from":
        return CompactRequest("from", view[len(view) // 3])
    return CompactRequest("range", view[8], view[len(view) // 2])


@pytest.mark.parametrize("direction", ["all", "up_to", "from", "range"])
@pytest.mark.parametrize("summarizer", ["anthropic", "memory", "server"])
async def test_preview_and_commit_give_the_same_sizes_for_every_summarizer(
    make_service: Any, fake_anthropic: FakeAnthropic, summarizer: str, direction: str
) -> None:
    service: BatonService = make_service(summarizer)
    sid = conversation(service, model=MODEL)
    session = service.session(sid)
    if summarizer == "memory":  # notes that cover the first half: the rest offline
        notes = MemoryNotes(notes_path(session.transcript.path), service.estimator.count_text)
        notes.write("# Current State\nModules m0 to m11 are fixed.", NotesMark(session.view[47]))
    if summarizer == "server" and direction in ("all", "up_to"):
        fake_anthropic.compaction.summary("The user had every module fixed, one by one.")
    draft = await service.drafts.preview(sid, _request(session.view, direction))
    expected = {"anthropic": "anthropic", "memory": "memory", "server": "server"}[summarizer]
    if summarizer == "server" and direction in ("from", "range"):
        expected = "anthropic"  # the API compacts only a prefix: Baton's own model summary
    assert draft.summarizer == expected, draft.warnings
    if expected == "anthropic":
        assert draft.summary.startswith("## 1. Primary request")
        assert not draft.cost.summary_offline and draft.cost.summary_usage is not None
    result = await service.drafts.apply(sid, draft.draft_id)
    assert result.summarizer == draft.summarizer
    if expected == "anthropic":  # the commit reports the usage of the request that wrote it
        assert result.summary_usage == draft.cost.summary_usage
    else:
        assert result.summary_usage is None
    assert abs(result.post_tokens - draft.post_tokens) <= 0.01 * result.post_tokens
    assert service.usage(sid).used_tokens == result.post_tokens


async def test_an_edited_summary_is_what_the_next_request_sends(
    make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    service: BatonService = make_service("anthropic")
    sid = conversation(service)
    draft = await service.drafts.preview(sid, _request(service.session(sid).view, "up_to"))
    edited = "EDITED: modules m0 to m11 were fixed; keep going with m12."
    await service.drafts.apply(sid, draft.draft_id, edited)
    fake_anthropic.default_text = "Continuing."
    await service.replies.send(sid, "carry on")
    sent = fake_anthropic.message_requests()[-1].body
    first = sent["messages"][0]
    text = " ".join(b.get("text", "") for b in first["content"] if isinstance(b, dict))
    assert edited in text and "m0 to m9" not in text  # the model's wording went with the edit


def _segments(estimator: Estimator) -> Any:
    """The fake's token counts: the estimator's, piece by piece, as Baton counts them."""

    def count(body: dict[str, Any]) -> list[int]:
        system = body.get("system") or ""
        if isinstance(system, list):
            system = "".join(b.get("text", "") for b in system)
        head = estimator.count_text(system) if system else 0
        pieces = [head]
        for item in body.get("messages") or []:
            content = item["content"]
            message = Message.model_validate({"role": item["role"], "content": content})
            pieces.append(estimator.count_message(message))
        return pieces

    return count


def _output(estimator: Estimator) -> Any:
    def count(content: list[dict[str, Any]]) -> int:
        return estimator.count_message(
            Message.model_validate({"role": "assistant", "content": content})
        )

    return count


class BilledCache(PromptCache):
    """The fake's prompt cache, keeping what it billed each request."""

    def __init__(self, segments: Any, output: Any) -> None:
        super().__init__(segments, output)
        self.billed: list[tuple[dict[str, Any], dict[str, int]]] = []

    def usage(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> dict[str, int]:
        found = super().usage(body, reply)
        self.billed.append((body, found))
        return found


@pytest.mark.parametrize("summarizer", ["extractive", "anthropic"])
@pytest.mark.parametrize("direction", ["from", "all"])
async def test_the_cost_figures_match_the_next_requests_cache_usage(
    make_service: Any,
    fake_anthropic: FakeAnthropic,
    cl100k: Encoder,
    direction: str,
    summarizer: str,
) -> None:
    service: BatonService = make_service(summarizer, Estimator(encoder=cl100k))
    counter = Estimator(encoder=cl100k)
    cache = BilledCache(_segments(counter), _output(counter))
    fake_anthropic.prompt_cache = cache
    fake_anthropic.default_text = "Done: " + " ".join(f"step{i}" for i in range(150))
    sid = service.create(title="cost", model=MODEL, system_prompt=SYSTEM).session_id
    for i in range(16):
        await service.replies.send(
            sid, f"Please fix module m{i}.py. " + " ".join(f"w{i}x{k}" for k in range(300))
        )
    view = service.session(sid).view
    if summarizer == "anthropic":
        fake_anthropic.reply(SUMMARY)
    draft = await service.drafts.preview(sid, _request(view, direction))
    cost = draft.cost
    if summarizer == "anthropic":  # the summary request's figures are what the API billed
        asked = [used for body, used in cache.billed if body.get("system") == SUMMARY_SYSTEM]
        assert len(asked) == 1
        billed = asked[0]
        assert cost.summary_input_tokens == (
            billed["input_tokens"]
            + billed["cache_read_input_tokens"]
            + billed["cache_creation_input_tokens"]
        )
        assert cost.summary_output_tokens == billed["output_tokens"] > 0
        assert cost.summary_usage is not None and "~" not in cost.text
    else:
        assert cost.summary_offline and cost.summary_usage is None
    assert cost.cache_prefix_survives is (direction == "from")
    assert cost.next_request_tokens == draft.post_tokens
    assert cost.next_request_tokens_without == draft.pre_tokens
    assert cost.price is not None and cost.next_request_dollars is not None
    result = await service.drafts.apply(sid, draft.draft_id)
    assert result.summary_usage == cost.summary_usage
    await service.replies.send(sid, "next")
    session = service.session(sid)
    reply = session.get(session.view[-1])
    assert reply.usage is not None
    actual = reply.usage.model_dump()  # what the fake's prompt cache billed
    total = actual["cache_read_input_tokens"] + actual["cache_creation_input_tokens"]
    assert abs(total - cost.next_request_tokens) <= 0.02 * total
    read = actual["cache_read_input_tokens"]
    assert abs(read - cost.cached_prefix_tokens) <= 0.02 * total
    written = actual["cache_creation_input_tokens"]
    assert abs(written - cost.cache_write_tokens) <= 0.02 * total
    if direction == "from":
        assert read > 0.2 * total  # the kept prefix was read from the cache


@pytest.mark.parametrize("direction", ["from", "range"])
async def test_a_prefix_no_request_sent_since_a_compaction_is_not_priced_as_cached(
    make_service: Any, fake_anthropic: FakeAnthropic, cl100k: Encoder, direction: str
) -> None:
    """A draft `from` (or `range`) right after another compaction priced the messages before
    its span as read from the prompt cache: no request had sent them since the compaction
    left them after its summary, so the next request wrote them all to the cache (16,671
    tokens, 12 read: those of the system prompt) where the draft said 10,605 read."""
    service: BatonService = make_service("extractive", Estimator(encoder=cl100k))
    counter = Estimator(encoder=cl100k)
    fake_anthropic.prompt_cache = BilledCache(_segments(counter), _output(counter))
    fake_anthropic.default_text = "Done: " + " ".join(f"step{i}" for i in range(150))
    sid = service.create(title="cost", model=MODEL, system_prompt=SYSTEM).session_id
    for i in range(16):
        await service.replies.send(
            sid, f"Please fix module m{i}.py. " + " ".join(f"w{i}x{k}" for k in range(300))
        )
    await service.compaction.compact(sid, CompactRequest("up_to", service.session(sid).view[7]))
    prompts = [m.id for m in service.session(sid).view_messages() if m.is_user_prompt]
    end = prompts[-2] if direction == "range" else None
    draft = await service.drafts.preview(sid, CompactRequest(direction, prompts[3], end))
    cost = draft.cost

    await service.drafts.apply(sid, draft.draft_id)
    await service.replies.send(sid, "next")

    session = service.session(sid)
    actual = session.get(session.view[-1]).usage
    assert actual is not None
    total = actual.cache_read_input_tokens + actual.cache_creation_input_tokens
    assert abs(actual.cache_read_input_tokens - cost.cached_prefix_tokens) <= 0.02 * total
    assert abs(actual.cache_creation_input_tokens - cost.cache_write_tokens) <= 0.02 * total
    assert not cost.cache_prefix_survives and "the cached prefix is rewritten" in cost.text


async def test_a_model_summary_reports_the_requests_usage_as_the_api_billed_it(
    make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    service: BatonService = make_service("anthropic")
    sid = conversation(service, model=MODEL)
    billed = {
        "input_tokens": 1_234,
        "output_tokens": 321,
        "cache_creation_input_tokens": 4_000,
        "cache_read_input_tokens": 20_000,
    }
    fake_anthropic.reply(SUMMARY, usage=billed)
    result = await service.compaction.compact(sid, CompactRequest("all"))
    assert result.summarizer == "anthropic" and result.summary_usage is not None
    assert result.summary_usage.model_dump() == billed
    assert result.wire()["summaryUsage"] == {
        "inputTokens": 1_234,
        "outputTokens": 321,
        "cacheCreationInputTokens": 4_000,
        "cacheReadInputTokens": 20_000,
    }
    # an answer without a summary gets a reminder: both requests are billed, both count
    service.compaction.uncompact(sid)
    fake_anthropic.reply("no summary here", usage={"input_tokens": 100, "output_tokens": 10})
    fake_anthropic.reply(SUMMARY, usage={"input_tokens": 200, "output_tokens": 20})
    again = await service.compaction.compact(sid, CompactRequest("all"))
    assert again.summary_usage is not None
    assert (again.summary_usage.input_tokens, again.summary_usage.output_tokens) == (300, 30)
    # offline: no model was asked, no usage
    offline: BatonService = make_service("extractive")
    other = conversation(offline, model=MODEL)
    assert (await offline.compaction.compact(other, CompactRequest("all"))).summary_usage is None
