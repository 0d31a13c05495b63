"""`exactCounts`: the API's count_tokens figure replaces the estimate until the next change."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_harness import Harness, conversation, usage_where, user

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-exact-0123456789"
EXACT = 4_321


def count_requests(fake: FakeAnthropic) -> list[Any]:
    return [r for r in fake.requests if r.path.split("?")[0] == "/v1/messages/count_tokens"]


async def exact_usage(lsp: Harness, sid: str, after: int) -> dict[str, Any]:
    return await usage_where(lsp, sid, "estimated", False, after)


async def test_a_burst_of_changes_is_counted_once_and_the_exact_figure_is_the_usage(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.count_tokens_result = EXACT
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY, "exactCounts": True})
    sid = (await lsp.create(systemPrompt="Be brief."))["sessionId"]
    mark = lsp.recorder.mark()
    turns = conversation(3)
    appended = await asyncio.gather(
        *(lsp.append(sid, turns[i], turns[i + 1]) for i in range(0, len(turns), 2))
    )
    assert all(a["usage"]["estimated"] is True for a in appended)  # never on the hot path

    usage = await exact_usage(lsp, sid, mark)
    assert usage["usedTokens"] == EXACT
    assert sum(usage["breakdown"][k] for k in ("system", "tools", "messages")) <= EXACT
    assert usage["breakdown"]["free"] == usage["contextWindow"] - EXACT
    requests = count_requests(fake_anthropic)
    assert len(requests) == 1  # the burst made one call
    body = requests[0].body
    assert body["system"] == "Be brief."
    assert len(body["messages"]) == 6 and body["messages"][0]["role"] == "user"
    assert requests[0].api_key == API_KEY
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["usedTokens"] == EXACT

    # the next change goes back to the estimate at once, then gets its own count
    fake_anthropic.count_tokens_result = EXACT + 100
    mark = lsp.recorder.mark()
    more = await lsp.append(sid, user("one more"))
    assert more["usage"]["estimated"] is True and more["usage"]["usedTokens"] != EXACT
    usage = await exact_usage(lsp, sid, mark)
    assert usage["usedTokens"] == EXACT + 100
    assert len(count_requests(fake_anthropic)) == 2
