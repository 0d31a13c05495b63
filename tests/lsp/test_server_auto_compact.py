"""Auto-compact in the background after an append: progress, cancel, and the circuit breaker."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from lsp_harness import Harness, conversation, usage_where, user
from lsprotocol import types

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-auto-0123456789"
SMALL: dict[str, Any] = {
    "contextWindow": 20_000,  # auto-compact threshold 13,400
    "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
}
TITLE = "Baton: auto-compacting"


def progress_values(lsp: Harness, token: Any) -> list[dict[str, Any]]:
    return [p.value for m, p in lsp.recorder.received if m == types.PROGRESS and p.token == token]


async def paused_usage(lsp: Harness, sid: str, paused: bool, after: int = 0) -> dict[str, Any]:
    return await usage_where(lsp, sid, "autoCompactPaused", paused, after)


async def test_a_background_auto_compaction_reports_server_initiated_progress(
    start_server,
) -> None:
    lsp: Harness = await start_server(options={**SMALL, "summarizer": "extractive"})
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(19, words=90))
    begin = await lsp.progress_begin(TITLE)
    assert begin.value["cancellable"] is True
    assert begin.token in lsp.client.progress_reports  # window/workDoneProgress/create came first
    await lsp.progress_end(begin.token)
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "compact" and p["sessionId"] == sid
    )
    assert (await lsp.get(sid))["session"]["compactions"] == 1
    kinds = [v["kind"] for v in progress_values(lsp, begin.token)]
    assert kinds[0] == "begin" and kinds[-1] == "end"


async def test_an_append_under_the_threshold_reports_no_progress(start_server) -> None:
    lsp: Harness = await start_server(options={**SMALL, "summarizer": "extractive"})
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(2))
    # the check runs before the debounced diagnostics, and a progress starts with a
    # create request the client would have handled before they arrive
    await lsp.latest_diagnostics(sid)
    assert lsp.client.progress_reports == {}


async def test_cancelling_the_progress_cancels_the_background_auto_compaction(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    options = {**SMALL, "anthropicApiKey": API_KEY, "summarizer": "anthropic"}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    gate = threading.Event()
    script = fake_anthropic.reply("<summary>never used</summary>", hold_after=3, gate=gate)
    try:
        await lsp.append(sid, *conversation(19, words=90))
        begin = await lsp.progress_begin(TITLE)
        assert await asyncio.to_thread(script.held.wait, 20)
        lsp.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=begin.token)
        )
        await lsp.progress_end(begin.token)  # the progress ends even when cancelled
    finally:
        gate.set()
    assert (await lsp.get(sid))["session"]["compactions"] == 0
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["autoCompactPaused"] is False

    # a cancel is no failure: the next append compacts as usual
    fake_anthropic.reply("<summary>The user asked about many parts.</summary>")
    mark = lsp.recorder.mark()
    await lsp.append(sid, user("one more question"))
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "compact", after=mark
    )
    assert (await lsp.get(sid))["session"]["compactions"] == 1


async def test_the_anthropic_summarizer_without_a_key_pauses_auto_compact_and_says_so(
    start_server,
) -> None:
    lsp: Harness = await start_server(options={**SMALL, "summarizer": "anthropic"})
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(19, words=90))
    await lsp.append(sid, user("a second question"))
    first_two = await lsp.request(protocol.USAGE, {"sessionId": sid})
    await lsp.append(sid, user("a third question"))
    usage = await paused_usage(lsp, sid, True)
    assert usage["state"] == "error"
    assert first_two["usedTokens"] >= first_two["autoCompactThreshold"]
    published = await lsp.latest_diagnostics(sid)
    diagnostic = next(d for d in published.diagnostics if d.code == "context-usage")
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert "auto-compact paused" in diagnostic.message
    assert (await lsp.get(sid))["session"]["compactions"] == 0


async def test_three_failed_auto_compacts_pause_it_and_a_manual_compact_resumes_it(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    options = {**SMALL, "anthropicApiKey": API_KEY, "summarizer": "anthropic"}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.error(400, "invalid_request_error", "refused for the test", times=3)
    await lsp.append(sid, *conversation(19, words=90))
    await lsp.append(sid, user("a second question"))
    await lsp.append(sid, user("a third question"))
    await paused_usage(lsp, sid, True)
    assert len(fake_anthropic.message_requests()) == 3  # one summary request per attempt
    assert (await lsp.get(sid))["session"]["compactions"] == 0

    mark = lsp.recorder.mark()
    fake_anthropic.reply("<summary>The user asked about sixteen parts.</summary>")
    result = await lsp.request(protocol.COMPACT, {"sessionId": sid, "direction": "all"})
    assert result["summarizer"] == "anthropic"
    usage = await paused_usage(lsp, sid, False, after=mark)
    assert usage["state"] != "error"
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["autoCompactPaused"] is False
