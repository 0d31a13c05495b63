"""Exact counts: debounced background work, a figure only for the view it counted, failures."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import pytest

from baton.core.background import Background
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import ApiError
from baton.core.model_api.client import AnthropicClient
from baton.core.model_api.exact_counts import ExactCounts, fingerprint, with_exact_count
from baton.core.settings import Settings
from baton.core.usage.budget import budget_for
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton_testkit.fake_anthropic import FakeAnthropic, ScriptedError

MODEL = "claude-haiku-4-5"


class FakeCounter:
    """Answers count_tokens with `tokens`; `during` runs while the call is in flight."""

    def __init__(self, tokens: int = 0, error: Exception | None = None) -> None:
        self.tokens = tokens
        self.error = error
        self.calls: list[dict[str, Any]] = []
        self.during: Any = None

    async def count_tokens(self, **request: Any) -> int:
        self.calls.append(request)
        if self.during is not None:
            self.during()
        await asyncio.sleep(0)  # a real call yields to the loop
        if self.error is not None:
            raise self.error
        return self.tokens


@pytest.fixture
def session(store: SessionStore) -> Session:
    created = store.create("exact", MODEL, "Be brief.")
    created.append(
        [
            MessageInput(role="user", content="What is in a.py?"),
            MessageInput(role="assistant", content="It defines x."),
        ]
    )
    return created


async def test_a_burst_of_debounced_calls_runs_once_with_the_last_state() -> None:
    background = Background()
    runs: list[int] = []
    done = asyncio.Event()

    async def work(value: int) -> None:
        runs.append(value)
        done.set()

    for value in range(5):  # no await between them: one burst
        background.debounce("k", 0.01, functools.partial(work, value), "test")
    assert background.pending("k")
    await asyncio.wait_for(done.wait(), 5)
    assert runs == [4]
    assert not background.pending("k")
    await background.close()


async def test_close_cancels_a_debounced_run_that_has_not_started() -> None:
    background = Background()
    ran: list[bool] = []

    async def work() -> None:
        ran.append(True)

    background.debounce("k", 60, work, "test")
    await background.close()
    assert not background.pending("k") and ran == []


async def test_a_count_is_kept_for_the_view_it_counted(session: Session) -> None:
    counts = ExactCounts(Background())
    client = FakeCounter(tokens=1_234)
    assert await counts.count(session, MODEL, None, client)
    current = fingerprint(session, MODEL, None)
    assert counts.figure(session.session_id, current) == 1_234
    assert client.calls[0]["system"] == "Be brief."
    assert [m["role"] for m in client.calls[0]["messages"]] == ["user", "assistant"]

    session.append([MessageInput(role="user", content="and b.py?")])
    assert counts.figure(session.session_id, fingerprint(session, MODEL, None)) is None
    tools = [{"name": "Read", "input_schema": {"type": "object"}}]
    assert counts.figure(session.session_id, fingerprint(session, MODEL, tools)) is None


async def test_a_view_that_changes_during_the_count_keeps_no_figure(session: Session) -> None:
    counts = ExactCounts(Background())
    client = FakeCounter(tokens=999)
    client.during = lambda: session.append([MessageInput(role="user", content="meanwhile")])
    assert not await counts.count(session, MODEL, None, client)
    assert counts.figure(session.session_id, fingerprint(session, MODEL, None)) is None


async def test_a_failed_count_is_logged_and_ignored(
    session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    counts = ExactCounts(Background())
    failing = FakeCounter(error=ApiError("Anthropic API error 529 (overloaded_error)"))
    assert not await counts.count(session, MODEL, None, failing)
    assert counts.figure(session.session_id, fingerprint(session, MODEL, None)) is None
    assert "exact count" in caplog.text and "overloaded" in caplog.text


async def test_a_rate_limited_count_is_asked_once_and_the_estimate_stands(
    session: Session,
    fake_anthropic: FakeAnthropic,
    anthropic_client: Callable[..., AnthropicClient],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK asked again after the retry-after, the figure waiting all that time."""
    limited = ScriptedError(429, "rate_limit_error", "slow down", retry_after="1")
    fake_anthropic.count_tokens_errors.append(limited)
    fake_anthropic.count_tokens_result = 4321
    counts = ExactCounts(Background())
    assert not await counts.count(session, MODEL, None, anthropic_client())
    asked = [r for r in fake_anthropic.requests if r.path == "/v1/messages/count_tokens"]
    assert len(asked) == 1
    assert counts.figure(session.session_id, fingerprint(session, MODEL, None)) is None
    assert "exact count" in caplog.text and "429" in caplog.text


def test_an_exact_figure_restates_the_usage(session: Session, estimator: Estimator) -> None:
    settings = Settings(context_window=20_000)
    estimate = compute_usage(session, settings, estimator)
    budget, _ = budget_for(MODEL, settings)
    exact = with_exact_count(estimate, 14_000, budget)
    assert estimate.estimated and not exact.estimated
    assert exact.used_tokens == 14_000
    assert exact.state == "error"  # past this small window's auto-compact threshold (13,400)
    parts = exact.breakdown
    assert parts.system + parts.tools + parts.messages + parts.summary + parts.attachments == 14_000
    assert parts.free == 6_000
    assert exact.percent_used == 70.0
