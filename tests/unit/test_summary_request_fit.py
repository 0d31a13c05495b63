"""The summary request fitted to the model's window before it is sent (`request_fit`): a
message longer than a share of the room is clipped, its head and tail kept; then the context
ahead of the span, then the span's oldest rounds go. Before, a span holding one message of
50 MB went whole, was refused for its bytes four times and the compaction failed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from test_anthropic_summarizer import ANSWER, MODEL, all_text, rounds, summarizer

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.rounds import TRUNCATION_MARKER
from baton.core.compaction.summary import request_fit
from baton.core.compaction.summary.model_summary import SPAN_MARKER
from baton.core.compaction.summary.summarizers import SummaryRequest
from baton.core.conversation.messages import MessageInput, text_message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]
WINDOW = 200_000  # MODEL's, from the table
ROOM = request_fit.room(WINDOW, 20_000, 0)
LEFT_OUT = re.compile(r"\[\.\.\. ([\d,]+) characters left out of this message here \.\.\.\]")


def log_lines(count: int) -> str:
    return "".join(f"line {i}: the build wrote dist/part{i % 13}.js\n" for i in range(count))


def sent_texts(fake: FakeAnthropic, n: int = 0) -> list[str]:
    body: dict[str, Any] = fake.message_requests()[n].body
    return ["\n".join(b["text"] for b in turn["content"]) for turn in body["messages"]]


def requests_and_answers(store: SessionStore, title: str, turns: int, words: int) -> Session:
    """A session of `turns` requests and answers of `words` words each."""
    session = store.create(title, MODEL)
    for n in range(turns):
        session.append(
            [
                MessageInput(role="user", content=f"request {n} " + "detail " * words),
                MessageInput(role="assistant", content=f"answer {n} " + "detail " * words),
            ]
        )
    return session


async def compacted(
    session: Session, estimator: Estimator, client: AnthropicClient
) -> CompactResult:
    """`session` compacted whole by the model summarizer, a small recent window kept."""
    settings = Settings(
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=1_000)
    )
    ctx = CompactContext(settings, estimator, summarizer(client))
    return await compact(session, CompactRequest(), ctx)


async def test_a_message_longer_than_the_window_is_sent_clipped_head_and_tail(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    log = log_lines(40_000)  # about 1.6 MB
    messages = [
        text_message("user", "here is the log\n" + log, tokens=400_000),
        text_message("assistant", "the build broke at part 7", api_message_id="r1"),
    ]
    fake_anthropic.reply(ANSWER)
    told: list[str] = []
    result = await summarizer(anthropic_client()).summarize(
        SummaryRequest("all", messages), lambda text, fraction: told.append(text)
    )
    assert result == "## 1. Primary request\nShip it."
    assert len(fake_anthropic.message_requests()) == 1  # nothing refused, nothing retried
    first = sent_texts(fake_anthropic)[0]
    found = LEFT_OUT.search(first)
    assert found is not None
    head, tail = first[: found.start()], first[found.end() :]
    assert head.startswith("here is the log\nline 0: ") and "line 39999:" in tail
    kept = len(head) + len(tail) - 2  # the line breaks around the marker
    assert kept + int(found[1].replace(",", "")) == len("here is the log\n" + log)
    # a quarter of the room, in the message's own characters per token
    assert kept <= len("here is the log\n" + log) * (ROOM // 4) // 400_000 + 1
    assert "the build broke at part 7" in all_text(fake_anthropic.message_requests()[0].body)
    assert any("1 long message clipped" in line for line in told)


async def test_a_span_longer_than_the_window_leaves_out_its_oldest_rounds_before_sending(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.reply(ANSWER)
    told: list[str] = []
    span = rounds(20, tokens=10_000)  # 41 messages of 10,000 tokens: twice the window
    await summarizer(anthropic_client()).summarize(
        SummaryRequest("all", span), lambda text, fraction: told.append(text)
    )
    assert len(fake_anthropic.message_requests()) == 1
    lines = set(all_text(fake_anthropic.message_requests()[0].body).split("\n"))
    assert "prompt 0" not in lines and "reply 1" not in lines
    assert "reply 20" in lines and "prompt 20" in lines
    kept = [m for m in span if m.text() in lines]
    assert sum(m.tokens for m in kept) <= ROOM  # what goes fits the room
    assert sum(m.tokens for m in kept) > ROOM - 2 * 20_000  # and no more went than a round
    assert any(f"the oldest {len(span) - len(kept)} messages left out" in t for t in told)


async def test_the_context_ahead_of_the_span_goes_first(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.reply(ANSWER)
    request = SummaryRequest(
        "from",
        context_before=[text_message("user", "old question", tokens=ROOM // 2)],
        messages=rounds(2, tokens=ROOM // 6),
    )
    await summarizer(anthropic_client()).summarize(request)
    texts = sent_texts(fake_anthropic)
    assert "old question" not in "\n".join(texts) and SPAN_MARKER not in "\n".join(texts)
    assert texts[0] == "prompt 0"  # the whole span, from its first prompt


async def test_a_span_that_fits_goes_as_it_is(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    fake_anthropic.reply(ANSWER)
    told: list[str] = []
    await summarizer(anthropic_client()).summarize(
        SummaryRequest("all", rounds(3, tokens=ROOM // 8)), lambda t, f: told.append(t)
    )
    text = all_text(fake_anthropic.message_requests()[0].body)
    lines = set(text.split("\n"))
    assert all(f"reply {n}" in lines for n in (1, 2, 3)) and "prompt 0" in lines
    assert TRUNCATION_MARKER not in text and not LEFT_OUT.search(text)
    assert not any("longer than the model" in t for t in told)


async def test_a_refusal_with_one_round_left_clips_its_longest_message(
    fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    # the count said it fits; the API says otherwise: the one round's longest message is
    # clipped to half, where before the compaction failed ("cannot be shortened")
    log = log_lines(10_000)
    messages = [text_message("user", log, tokens=ROOM // 5)]
    fake_anthropic.prompt_too_long(actual=230_000, limit=WINDOW)
    fake_anthropic.reply(ANSWER)
    result = await summarizer(anthropic_client()).summarize(SummaryRequest("all", messages))
    assert result == "## 1. Primary request\nShip it."
    first, second = (sent_texts(fake_anthropic, n)[0] for n in (0, 1))
    assert first.startswith(log) and not LEFT_OUT.search(first)
    found = LEFT_OUT.search(second)
    assert found is not None and int(found[1].replace(",", "")) >= len(log) // 2 - 1


async def test_a_compaction_of_a_message_over_the_apis_bytes_commits_with_one_request(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    fake_anthropic.max_body_bytes = 1_000_000  # the API's 32 MB, scaled down
    session = store.create("a pasted log", MODEL)
    session.append(
        [
            MessageInput(role="user", content="why does the build fail?\n" + log_lines(60_000)),
            MessageInput(role="assistant", content="part 7 is missing"),
            MessageInput(role="user", content="fix it " + "please " * 400),
            MessageInput(role="assistant", content="done " + "detail " * 400),
        ]
    )
    assert len(session.transcript.path.read_bytes()) > 2 * fake_anthropic.max_body_bytes
    fake_anthropic.reply(ANSWER)
    result = await compacted(session, estimator, anthropic_client())
    assert result.summarizer == "anthropic" and result.summary is not None
    [sent] = fake_anthropic.message_requests()  # one request, under the API's bytes
    assert LEFT_OUT.search(all_text(sent.body))
    assert session.view_messages()[0].kind == "summary"
    assert result.warnings == [
        "The span was longer than the summary's model reads at once: 1 long message was "
        "sent clipped to head and tail. The transcript keeps them whole, and undoing the "
        "compaction gives them back."
    ]


async def test_a_compaction_says_how_many_of_the_spans_messages_its_summary_left_out(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    # the model reads 6,000 tokens: the span's oldest turns do not fit its request, and
    # the result says how many were left out
    fake_anthropic.models[MODEL] = {"max_input_tokens": 6_000, "max_tokens": 1_000}
    session = requests_and_answers(store, "long turns", 12, 300)
    fake_anthropic.reply(ANSWER)
    result = await compacted(session, estimator, anthropic_client())
    lines = set(all_text(fake_anthropic.message_requests()[0].body).split("\n"))
    sent = [m for m in session.messages.values() if m.text() in lines]
    unsent = len(result.summarized_message_ids) - len(sent)
    assert unsent > 0 and not any(m.text().startswith("request 0 ") for m in sent)
    assert result.warnings == [
        f"The span was longer than the summary's model reads at once: its oldest {unsent} "
        "messages were left out. The transcript keeps them whole, and undoing the "
        "compaction gives them back."
    ]


async def test_a_compaction_whose_span_the_model_read_whole_says_nothing_of_it(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    session = requests_and_answers(store, "short", 4, 100)
    fake_anthropic.reply(ANSWER)
    result = await compacted(session, estimator, anthropic_client())
    assert result.summarizer == "anthropic" and result.warnings == []
