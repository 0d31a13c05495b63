"""Summaries written ahead of auto-compact over LSP (autoCompact.backgroundPercent), against
the fake API: progress, hand-over at the threshold with late turns kept, staleness, cancel,
closing the session; and the thrash guard's diagnostic."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from lsp_harness import Harness, assistant, conversation, user
from lsprotocol import types

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply

API_KEY = "sk-ant-test-ahead-0123456789"
SMALL: dict[str, Any] = {
    "contextWindow": 20_000,  # auto-compact threshold 13,400; written ahead from 10,720
    "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
}
MODEL = {**SMALL, "anthropicApiKey": API_KEY, "summarizer": "anthropic"}
AHEAD = "Baton: summarizing ahead of auto-compact"
AUTO = "Baton: auto-compacting"


async def compacted(lsp: Harness, sid: str, after: int) -> None:
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED,
        lambda p: p["sessionId"] == sid and p["reason"] == "compact",
        after=after,
    )


async def usage(lsp: Harness, sid: str) -> dict[str, Any]:
    found: dict[str, Any] = await lsp.request(protocol.USAGE, {"sessionId": sid})
    return found


async def grow_to(lsp: Harness, sid: str, share: float, start: int = 0, words: int = 90) -> int:
    """Append turns until usage reaches `share` of the auto-compact threshold (as the
    append's own answer says, before any auto-compaction it started); returns the next
    turn number."""
    n = start
    now = await usage(lsp, sid)
    while now["usedTokens"] < share * now["autoCompactThreshold"]:
        now = (await lsp.append(sid, *turn(n, words)))["usage"]
        n += 1
    return n


def turn(n: int, words: int = 90) -> list[dict[str, Any]]:
    filler = " ".join(f"late{n}x{i}" for i in range(words))
    return [user(f"Question {n}: {filler}"), assistant(f"Answer {n}: {filler}")]


class Held:
    """A summary written ahead, held at the fake API: the next turn number and its progress."""

    def __init__(self, next_turn: int, started: Any) -> None:
        self.next_turn = next_turn
        self.started = started


@asynccontextmanager
async def summary_held(
    lsp: Harness, sid: str, fake: FakeAnthropic, text: str
) -> AsyncIterator[Held]:
    """Grows the session to the start point and holds the summary written ahead at the fake
    API for the block's duration (released however the block ends)."""
    script = held_reply(fake, text)
    try:
        n = await grow_to(lsp, sid, 0.8)
        started = await lsp.progress_begin(AHEAD)
        assert await asyncio.to_thread(script.held.wait, 20)
        yield Held(n, started)
    finally:
        assert script.gate is not None
        script.gate.set()


async def test_the_summary_written_ahead_is_committed_at_the_threshold_with_later_turns_kept(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    script = held_reply(fake_anthropic, "<summary>Written ahead: parts 0 to 9.</summary>")
    n = await grow_to(lsp, sid, 0.8)
    started = await lsp.progress_begin(AHEAD)
    assert started.value["cancellable"] is True
    assert await asyncio.to_thread(script.held.wait, 20)

    # the conversation goes on while the summary is written
    view_then = [m["id"] for m in (await lsp.get(sid))["messages"]]
    late = (await lsp.append(sid, *turn(n, words=20)))["messageIds"]
    assert (await lsp.get(sid))["session"]["compactions"] == 0
    assert script.gate is not None
    script.gate.set()
    await lsp.progress_end(started.token)

    mark = lsp.recorder.mark()
    await grow_to(lsp, sid, 1.0, start=n + 1)
    await compacted(lsp, sid, mark)
    assert len(fake_anthropic.message_requests()) == 1  # no second summary request
    sent = fake_anthropic.message_requests()[0].body["messages"]
    assert late[0] not in str(sent)  # the summary covers the view as it was
    got = await lsp.get(sid)
    view = got["messages"]
    assert view[0]["kind"] == "summary" and "Written ahead" in str(view[0]["content"])
    ids = [m["id"] for m in view]
    assert ids[ids.index(late[0]) : ids.index(late[0]) + 2] == late
    assert not set(view_then) & set(ids[:1])
    after = await usage(lsp, sid)
    assert after["usedTokens"] < after["autoCompactThreshold"]


async def test_a_send_at_the_threshold_waits_for_the_summary_written_ahead_not_a_new_one(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    script = held_reply(fake_anthropic, "<summary>Written ahead of the send.</summary>")
    fake_anthropic.reply("The reply, after the swap.")
    n = await grow_to(lsp, sid, 0.8)
    await lsp.progress_begin(AHEAD)
    assert await asyncio.to_thread(script.held.wait, 20)
    await grow_to(lsp, sid, 0.97, start=n, words=8)

    mark = lsp.recorder.mark()
    prompt = "Next question: " + " ".join(f"ask{i}" for i in range(600))
    sending = asyncio.ensure_future(
        lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": prompt})
    )
    await lsp.recorder.notification(  # the prompt is in; the turn now waits for the summary
        protocol.SESSION_CHANGED,
        lambda p: p["sessionId"] == sid and p["reason"] == "append",
        after=mark,
    )
    assert not sending.done()
    assert script.gate is not None
    script.gate.set()
    result = await sending
    assert result["message"]["content"][0]["text"] == "The reply, after the swap."
    requests = fake_anthropic.message_requests()
    assert len(requests) == 2  # the summary written ahead, then the reply
    sent = requests[1].body["messages"]
    assert "Written ahead of the send" in str(sent[0]["content"])
    assert "ask599" in str(sent[-1]["content"])  # the prompt, after the summary


async def test_a_reply_that_brings_usage_past_the_start_point_starts_the_summary(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    await grow_to(lsp, sid, 0.7)
    before = await usage(lsp, sid)
    assert before["usedTokens"] < 0.8 * before["autoCompactThreshold"]
    # the API says the prompt was 2,000 tokens larger than the estimate: past 80%
    real = {"input_tokens": before["usedTokens"] + 2_000, "output_tokens": 40}
    fake_anthropic.reply("The answer that fills the context.", usage=real)
    script = held_reply(fake_anthropic, "<summary>Written after the reply.</summary>")
    try:
        mark = lsp.recorder.mark()
        await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "One more?"})
        started = await lsp.progress_begin(AHEAD, after=mark)
        assert await asyncio.to_thread(script.held.wait, 20)
        reply_request, summary_request = fake_anthropic.message_requests()
        assert "One more?" in str(reply_request.body["messages"][-1])
        assert "summar" in str(summary_request.body).lower()
        after = await usage(lsp, sid)
        assert after["usedTokens"] < after["autoCompactThreshold"]
        assert (await lsp.get(sid))["session"]["compactions"] == 0
    finally:
        assert script.gate is not None
        script.gate.set()
    await lsp.progress_end(started.token)


async def test_a_pin_makes_the_summary_written_ahead_stale_and_a_new_one_is_written(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    script = held_reply(fake_anthropic, "<summary>Stale: written before the pin.</summary>")
    n = await grow_to(lsp, sid, 0.8)
    started = await lsp.progress_begin(AHEAD)
    assert await asyncio.to_thread(script.held.wait, 20)
    pinned = (await lsp.get(sid))["messages"][2]["id"]
    await lsp.request(protocol.SESSION_PIN, {"sessionId": sid, "messageId": pinned, "pinned": True})
    await lsp.progress_end(started.token)  # the stale summary's request was cancelled
    assert script.gate is not None
    script.gate.set()

    fake_anthropic.reply("<summary>Fresh: written with the pin.</summary>")
    mark = lsp.recorder.mark()
    await grow_to(lsp, sid, 1.0, start=n)
    await compacted(lsp, sid, mark)
    view = (await lsp.get(sid))["messages"]
    assert "Fresh: written with the pin" in str(view[0]["content"])
    assert pinned in [m["id"] for m in view]
    assert len(fake_anthropic.message_requests()) >= 2


async def test_a_manual_compaction_while_the_summary_is_written_cancels_it(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    async with summary_held(
        lsp, sid, fake_anthropic, "<summary>Stale: overtaken.</summary>"
    ) as held:
        fake_anthropic.reply("<summary>The manual one.</summary>")
        result = await lsp.request(protocol.COMPACT, {"sessionId": sid, "direction": "all"})
        assert "The manual one" in result["summary"]
        await lsp.progress_end(held.started.token)  # the summary ahead was cancelled, not kept
    got = await lsp.get(sid)
    assert got["session"]["compactions"] == 1
    assert "The manual one" in str(got["messages"][0]["content"])


async def test_cancelling_the_progress_cancels_the_summary_and_the_threshold_still_compacts(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    async with summary_held(lsp, sid, fake_anthropic, "<summary>never used</summary>") as held:
        lsp.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=held.started.token)
        )
        await lsp.progress_end(held.started.token)
    n = held.next_turn
    assert (await lsp.get(sid))["session"]["compactions"] == 0
    assert (await usage(lsp, sid))["autoCompactPaused"] is False

    fake_anthropic.reply("<summary>Written at the threshold.</summary>")
    mark = lsp.recorder.mark()
    await grow_to(lsp, sid, 1.0, start=n)
    await compacted(lsp, sid, mark)
    await lsp.progress_begin(AUTO, after=mark)
    view = (await lsp.get(sid))["messages"]
    assert "Written at the threshold" in str(view[0]["content"])
    ahead_begins = [
        p
        for m, p in lsp.recorder.received[mark:]
        if m == types.PROGRESS and p.value.get("title") == AHEAD
    ]
    assert ahead_begins == []  # a cancelled summary is not started again


async def test_deleting_the_session_cancels_its_summary(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=MODEL)
    sid = (await lsp.create())["sessionId"]
    async with summary_held(lsp, sid, fake_anthropic, "<summary>never used</summary>") as held:
        await lsp.request(protocol.SESSION_DELETE, {"sessionId": sid})
        await lsp.progress_end(held.started.token)


async def test_background_percent_zero_writes_nothing_ahead(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    options = {**MODEL, "autoCompact": {"backgroundPercent": 0}}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    await grow_to(lsp, sid, 0.9)
    await lsp.latest_diagnostics(sid)  # the checks after those appends have run
    assert fake_anthropic.message_requests() == []
    assert [p for m, p in lsp.recorder.received if m == types.PROGRESS] == []


async def test_the_extractive_summarizer_writes_ahead_only_when_asked(start_server) -> None:
    options = {**SMALL, "summarizer": "extractive", "autoCompact": {"backgroundPercent": 50}}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    n = await grow_to(lsp, sid, 0.5)
    started = await lsp.progress_begin(AHEAD)
    await lsp.progress_end(started.token)
    mark = lsp.recorder.mark()
    await grow_to(lsp, sid, 1.0, start=n)
    await compacted(lsp, sid, mark)
    assert (await lsp.get(sid))["messages"][0]["kind"] == "summary"


# ---- the thrash guard --------------------------------------------------------------------


def big_read(n: int) -> list[dict[str, Any]]:
    log = " ".join(f"line{n}x{i}" for i in range(4_000))
    return [user(f"Read the whole log {n}: {log}"), assistant(f"I read log {n}.")]


async def test_three_refills_in_a_row_stop_auto_compact_with_a_diagnostic_until_compacted(
    start_server,
) -> None:
    lsp: Harness = await start_server(options={**SMALL, "summarizer": "extractive"})
    sid = (await lsp.create())["sessionId"]
    mark = lsp.recorder.mark()
    await lsp.append(sid, *conversation(19, words=90))
    await compacted(lsp, sid, mark)
    for n in range(2):  # refills 1 and 2 are compacted again
        mark = lsp.recorder.mark()
        await lsp.append(sid, *big_read(n))
        await compacted(lsp, sid, mark)
    mark = lsp.recorder.mark()
    await lsp.append(sid, *big_read(2))  # refill 3: auto-compact stops
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED,
        lambda p: p["sessionId"] == sid and p["usage"]["autoCompactPaused"] is True,
        after=mark,
    )
    assert (await lsp.get(sid))["session"]["compactions"] == 3

    published = await lsp.recorder.notification(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda p: any(d.code == "auto-compact-thrashing" for d in p.diagnostics),
        after=mark,
    )
    found = next(d for d in published.diagnostics if d.code == "auto-compact-thrashing")
    assert found.severity == types.DiagnosticSeverity.Warning
    assert "working set does not fit" in found.message
    assert "Compact manually to resume" in found.message
    usage_line = next(d for d in published.diagnostics if d.code == "context-usage")
    assert usage_line.severity == types.DiagnosticSeverity.Error

    mark = lsp.recorder.mark()
    await lsp.request(protocol.COMPACT, {"sessionId": sid, "direction": "all"})
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED,
        lambda p: p["sessionId"] == sid and p["usage"]["autoCompactPaused"] is False,
        after=mark,
    )
    assert (await usage(lsp, sid))["autoCompactPaused"] is False
    cleared = await lsp.recorder.notification(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda p: not any(d.code == "auto-compact-thrashing" for d in p.diagnostics),
        after=mark,
    )
    assert cleared.uri.endswith(f"{sid}.md")


# ---- the API's own compaction, written ahead ---------------------------------------------


async def test_the_apis_compaction_block_written_ahead_is_swapped_in_with_later_turns_after_it(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    model = "claude-sonnet-4-6"  # one the fake's Models API lists for compaction
    options = {**SMALL, "anthropicApiKey": API_KEY, "summarizer": "server", "model": model}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create(model=model))["sessionId"]
    n = await grow_to(lsp, sid, 0.8)
    started = await lsp.progress_begin(AHEAD)
    await lsp.progress_end(started.token)
    [issued] = fake_anthropic.compaction.issued  # written for the view at 80%
    late = (await lsp.append(sid, *turn(n, words=20)))["messageIds"]

    mark = lsp.recorder.mark()
    await grow_to(lsp, sid, 1.0, start=n + 1)
    await compacted(lsp, sid, mark)
    assert fake_anthropic.compaction.issued == [issued]  # swapped in, not asked for again
    view = (await lsp.get(sid))["messages"]
    assert view[0]["content"] == [issued]
    ids = [m["id"] for m in view]
    assert ids[ids.index(late[0]) : ids.index(late[0]) + 2] == late

    fake_anthropic.reply("Carrying on from the block.")
    sent = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Go on."})
    assert sent["message"]["content"][0]["text"] == "Carrying on from the block."
    first = fake_anthropic.message_requests()[-1].body["messages"][0]
    assert first["role"] == "assistant" and first["content"][0] == issued  # the fake checks it
