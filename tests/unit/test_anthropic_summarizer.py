"""The `anthropic` summarizer against the fake Messages API: request shape, retries, truncation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.prompts import SUMMARY_REMINDER, summary_prompt
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.rounds import TRUNCATION_MARKER
from baton.core.compaction.summary.model_summary import (
    SPAN_MARKER,
    SUMMARY_SYSTEM,
    AnthropicSummarizer,
)
from baton.core.compaction.summary.summarizers import SummaryRequest
from baton.core.conversation.messages import (
    ImageBlock,
    Message,
    MessageInput,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import PromptTooLong, SummarizerFailed
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

MODEL = "claude-haiku-4-5"
MakeClient = Callable[..., AnthropicClient]
ANSWER = (
    "<analysis>\nmy draft notes\n</analysis>\n"
    "<summary>\n## 1. Primary request\nShip it.\n</summary>"
)


def summarizer(client: AnthropicClient) -> AnthropicSummarizer:
    return AnthropicSummarizer(client, MODEL)


def all_text(body: dict[str, Any]) -> str:
    return "\n".join(
        block.get("text", "") for turn in body["messages"] for block in turn["content"]
    )


def rounds(count: int, tokens: int = 1_000) -> list[Message]:
    """A prompt, then `count` rounds of (reply with its own API id, next prompt)."""
    messages = [text_message("user", "prompt 0", tokens=tokens)]
    for n in range(1, count + 1):
        messages.append(
            text_message("assistant", f"reply {n}", tokens=tokens, api_message_id=f"r{n}")
        )
        messages.append(text_message("user", f"prompt {n}", tokens=tokens))
    return messages


async def test_one_streamed_request_without_tools_ends_with_the_prompt_and_keeps_the_summary(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    fake_anthropic.reply(ANSWER)
    messages = [
        Message(role="user", content=[TextBlock(text="fix the parser"), ImageBlock(source={})]),
        Message(
            role="assistant",
            api_message_id="r1",
            content=[
                ThinkingBlock(thinking="secret plan", signature="s"),
                ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "parser.py"}),
            ],
        ),
        Message(
            role="user",
            content=[ToolResultBlock(tool_use_id="toolu_1", content="def parse(): pass")],
        ),
        Message(
            role="assistant",
            api_message_id="r2",
            content=[ToolUseBlock(id="toolu_2", name="Bash", input={"command": "pytest"})],
        ),  # a call that never got its result: fine as text
    ]
    request = SummaryRequest(direction="all", messages=messages, instructions="focus on tests")
    result = await summarizer(anthropic_client()).summarize(request)

    assert result == "## 1. Primary request\nShip it."
    [sent] = fake_anthropic.message_requests()
    body = sent.body
    assert body["stream"] is True and "tools" not in body
    assert body["system"] == SUMMARY_SYSTEM
    assert body["max_tokens"] == 20_000
    assert body["messages"][-1]["role"] == "user"
    assert body["messages"][-1]["content"][-1]["text"] == summary_prompt("all", "focus on tests")
    blocks = [b for turn in body["messages"] for b in turn["content"]]
    assert {b["type"] for b in blocks} == {"text"}  # no tool, image or thinking block
    text = all_text(body)
    assert '[tool call Read (toolu_1): {"file_path": "parser.py"}]' in text
    assert "[tool result for toolu_1]\ndef parse(): pass" in text
    assert "[image]" in text and "secret plan" not in text
    assert '[tool call Bash (toolu_2): {"command": "pytest"}]' in text


async def test_context_before_comes_first_then_a_marker_then_the_span(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    fake_anthropic.reply(ANSWER)
    request = SummaryRequest(
        direction="from",
        context_before=[
            text_message("user", "old question"),
            text_message("assistant", "old answer", api_message_id="r1"),
        ],
        messages=[
            text_message("user", "new question"),
            text_message("assistant", "new answer", api_message_id="r2"),
        ],
    )
    await summarizer(anthropic_client()).summarize(request)
    turns = fake_anthropic.message_requests()[0].body["messages"]
    texts = [[b["text"] for b in turn["content"]] for turn in turns]
    assert texts == [
        ["old question"],
        ["old answer"],
        [SPAN_MARKER, "new question"],
        ["new answer"],
        [summary_prompt("from", None)],
    ]


async def test_streaming_reports_progress(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    long_body = "\n".join(f"- detail number {i} of the work" for i in range(80))
    fake_anthropic.reply(f"<summary>{long_body}</summary>", chunk_chars=50)
    seen: list[str] = []
    request = SummaryRequest(direction="all", messages=rounds(1))
    result = await summarizer(anthropic_client()).summarize(request, lambda t, f: seen.append(t))
    assert result == long_body
    assert any(t.startswith("Writing the summary") for t in seen)


def last_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"][-1]["text"])


async def test_an_answer_without_a_summary_section_is_asked_again_with_a_reminder(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    fake_anthropic.reply("I cannot summarize this.")
    fake_anthropic.reply(ANSWER)
    seen: list[str] = []
    result = await summarizer(anthropic_client()).summarize(
        SummaryRequest("all", rounds(1)), lambda t, f: seen.append(t)
    )
    assert result == "## 1. Primary request\nShip it."
    first, second = (r.body for r in fake_anthropic.message_requests())
    assert SUMMARY_REMINDER not in last_prompt(first)
    assert last_prompt(second).endswith(SUMMARY_REMINDER)
    assert last_prompt(second).startswith(last_prompt(first))  # the same request, reminded
    assert "The answer held no summary; asking once more" in seen


@pytest.mark.parametrize(
    "answers",
    [
        ("I cannot summarize this.", "I cannot summarize this."),
        ("<analysis>only a draft</analysis>", "Here is what happened: the parser was fixed."),
        ("   ", "<summary>\n</summary>"),
    ],
)
async def test_two_answers_without_a_summary_section_are_a_summarizer_failure(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient, answers: tuple[str, str]
) -> None:
    for answer in answers:
        fake_anthropic.reply(answer)
    fake_anthropic.reply(ANSWER)  # never asked for: one reminder only
    with pytest.raises(SummarizerFailed, match="no <summary> section, also after a reminder"):
        await summarizer(anthropic_client()).summarize(SummaryRequest("all", rounds(1)))
    assert len(fake_anthropic.message_requests()) == 2


def six_turns(store: SessionStore, title: str) -> Session:
    """A session of six long requests and answers, titled `title`."""
    session = store.create(title, MODEL)
    for n in range(6):
        session.append(
            [
                MessageInput(role="user", content=f"request {n} " + "detail " * 300),
                MessageInput(role="assistant", content=f"answer {n} " + "detail " * 300),
            ]
        )
    return session


async def test_a_refusal_commits_nothing(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    session = six_turns(store, "refused")
    view, transcript = list(session.view), session.transcript.path.read_bytes()
    fake_anthropic.reply("I cannot summarize this.")
    fake_anthropic.reply("I cannot summarize this.")
    settings = Settings(
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=1_000)
    )
    ctx = CompactContext(settings, estimator, summarizer(anthropic_client()))
    with pytest.raises(SummarizerFailed):
        await compact(session, CompactRequest(), ctx)
    assert session.view == view and session.compactions == 0 and not session.compacting
    assert session.transcript.path.read_bytes() == transcript


async def test_prompt_too_long_drops_the_oldest_rounds_covering_the_overflow_then_succeeds(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    # over by 1,500 tokens: round 0 (1,000) and round 1 (2,000) must go, no more
    fake_anthropic.prompt_too_long(actual=201_500, limit=200_000, status=413)
    fake_anthropic.reply(ANSWER)
    result = await summarizer(anthropic_client()).summarize(SummaryRequest("all", rounds(4)))
    assert result == "## 1. Primary request\nShip it."
    first, second = (r.body for r in fake_anthropic.message_requests())
    assert "prompt 0" in all_text(first)
    retry = all_text(second)
    assert second["messages"][0]["content"][0]["text"] == TRUNCATION_MARKER
    assert "prompt 0" not in retry and "reply 1" not in retry and "prompt 1" not in retry
    assert all(f"reply {n}" in retry for n in (2, 3, 4))


async def test_prompt_too_long_after_three_shorter_retries_gives_up(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    for _ in range(4):
        fake_anthropic.prompt_too_long(actual=200_010, limit=200_000)
    with pytest.raises(PromptTooLong, match="after 3 shorter retries") as caught:
        await summarizer(anthropic_client()).summarize(SummaryRequest("all", rounds(8)))
    assert (caught.value.actual, caught.value.limit) == (200_010, 200_000)
    sent = [all_text(r.body) for r in fake_anthropic.message_requests()]
    assert len(sent) == 4
    # each retry drops the oldest round left (the overflow is smaller than one round)
    oldest = ["prompt 0", "reply 1", "reply 2", "reply 3"]
    for attempt, text in enumerate(sent):
        assert oldest[attempt] in text
        assert all(gone not in text for gone in oldest[:attempt])


async def test_a_prompt_that_cannot_shrink_is_prompt_too_long(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
) -> None:
    fake_anthropic.prompt_too_long(actual=300_000, limit=200_000)
    with pytest.raises(PromptTooLong, match="cannot be shortened"):
        await summarizer(anthropic_client()).summarize(
            SummaryRequest("all", [text_message("user", "one huge prompt")])
        )
    assert len(fake_anthropic.message_requests()) == 1


async def test_the_engine_commits_the_models_summary(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    session = six_turns(store, "summary")
    fake_anthropic.reply(ANSWER)
    settings = Settings(
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=1_000)
    )
    ctx = CompactContext(settings, estimator, summarizer(anthropic_client()))
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "anthropic"
    assert result.summary is not None and result.summary.startswith("## 1. Primary request")
    summary = session.view_messages()[0]
    assert summary.kind == "summary" and "Ship it." in summary.text()
    assert "request 0" in all_text(fake_anthropic.message_requests()[0].body)


async def test_the_output_cap_respects_a_model_that_writes_less(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.models["claude-small-out"] = {"max_input_tokens": 200_000, "max_tokens": 8_192}
    fake_anthropic.reply(ANSWER)
    small = AnthropicSummarizer(anthropic_client(), "claude-small-out")
    await small.summarize(SummaryRequest("all", rounds(1)))
    assert fake_anthropic.message_requests()[0].body["max_tokens"] == 8_192
