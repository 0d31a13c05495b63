"""The API's compaction request is asked again as a reply is: after a 429, a 529 or a
connection that failed, as often as the client's retries, each wait said on the
compaction's progress before it begins, in the words a reply's wait uses."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_api_compaction import compaction_requests, context, conversation

from baton.core.compaction.engine import compact
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.store import SessionStore
from baton.core.errors import ApiError
from baton.core.model_api.client import AnthropicClient
from baton.core.model_api.stream_failures import WaitText
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

ClientMaker = Callable[..., AnthropicClient]


async def test_each_wait_of_the_apis_compaction_is_said_on_its_progress(
    fake_anthropic: FakeAnthropic,
    anthropic_client: ClientMaker,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    """The SDK asked the request again on its own, a 429 and a 529 waited out unsaid."""
    session, _ = conversation(store)
    fake_anthropic.compaction.busy(429, retry_after="0.01")
    fake_anthropic.compaction.busy(529, retry_after="0.01")
    ctx, fallback = context(estimator, anthropic_client(max_retries=2))
    said: list[str] = []
    ctx.progress = lambda text, _: said.append(text)
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "server" and fallback.requests == []
    waits = [text for text in said if isinstance(text, WaitText)]
    assert waits == [
        "Rate limited by the API: trying again in 1 s (attempt 2 of 3)",
        "The API is overloaded: trying again in 1 s (attempt 3 of 3)",
    ]
    sent = [r for r in fake_anthropic.message_requests() if "compaction" in (r.body or {})]
    assert [r.headers["x-stainless-retry-count"] for r in sent] == ["0", "1", "2"]
    assert len(compaction_requests(fake_anthropic)) == 3
    assert session.view_messages()[0].content[0].type == "compaction"


async def test_the_apis_compaction_is_asked_again_no_more_than_the_retries_allow(
    fake_anthropic: FakeAnthropic,
    anthropic_client: ClientMaker,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    session, _ = conversation(store)
    fake_anthropic.compaction.busy(529, retry_after="0.01", times=2)
    ctx, fallback = context(estimator, anthropic_client(max_retries=1))
    said: list[str] = []
    ctx.progress = lambda text, _: said.append(text)
    before = list(session.view)
    with pytest.raises(ApiError) as failed:
        await compact(session, CompactRequest(), ctx)
    assert failed.value.data == {"status": 529, "type": "overloaded_error"}
    assert [text for text in said if isinstance(text, WaitText)] == [
        "The API is overloaded: trying again in 1 s (attempt 2 of 2)"
    ]
    assert len(compaction_requests(fake_anthropic)) == 2
    assert session.view == before and fallback.requests == []
