"""Compaction drafts over the wire: baton/compact/preview, applyDraft, discardDraft; the
summary streams with progress and a cancel stops it; stale and unknown drafts fail."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from lsp_harness import Harness, conversation
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

REQUEST_CANCELLED = -32800


async def _session(lsp: Harness, turns: int = 40) -> tuple[str, list[str]]:
    sid = (await lsp.create(title="drafts"))["sessionId"]
    ids = (await lsp.append(sid, *conversation(turns)))["messageIds"]
    return sid, ids


async def test_preview_edit_apply_and_the_meter_shows_the_figure(lsp: Harness) -> None:
    sid, ids = await _session(lsp)
    before = await lsp.render(sid)
    draft = await lsp.request(protocol.COMPACT_PREVIEW, {"sessionId": sid})
    assert draft["draftId"] and draft["summary"] and draft["cost"]["text"]
    assert draft["summarizedMessageIds"] + draft["keptMessageIds"] == ids
    assert draft["dropped"]["messagesSummarized"] == len(draft["summarizedMessageIds"])
    assert await lsp.render(sid) == before  # nothing committed

    edited = "Edited: the user asked many questions and got answers."
    mark = lsp.recorder.mark()
    result = await lsp.request(
        protocol.COMPACT_APPLY_DRAFT,
        {"sessionId": sid, "draftId": draft["draftId"], "summary": edited},
    )
    assert result["summary"].startswith(edited) and result["dropped"]["text"]
    usage = await lsp.recorder.notification(protocol.USAGE_CHANGED, after=mark)
    assert usage["usage"]["usedTokens"] == result["postTokens"]
    view = await lsp.get(sid)
    assert edited in view["messages"][0]["content"][0]["text"]

    again = await lsp.error(
        protocol.COMPACT_APPLY_DRAFT, {"sessionId": sid, "draftId": draft["draftId"]}
    )
    assert again.data["code"] == "draft_not_found"


async def test_a_stale_draft_is_refused_and_a_discarded_one_leaves_nothing(
    lsp: Harness, tmp_path: Path
) -> None:
    sid, ids = await _session(lsp)
    draft = await lsp.request(
        protocol.COMPACT_PREVIEW, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[9]}
    )
    await lsp.append(sid, {"role": "user", "content": "and one more"})
    stale = await lsp.error(
        protocol.COMPACT_APPLY_DRAFT, {"sessionId": sid, "draftId": draft["draftId"]}
    )
    assert stale.data["code"] == "draft_stale" and "preview the compaction again" in stale.message
    assert (await lsp.get(sid))["session"]["compactions"] == 0

    fresh = await lsp.request(protocol.COMPACT_PREVIEW, {"sessionId": sid, "direction": "all"})
    before = await lsp.render(sid)
    assert (
        await lsp.request(
            protocol.COMPACT_DISCARD_DRAFT, {"sessionId": sid, "draftId": fresh["draftId"]}
        )
        == {}
    )
    assert await lsp.render(sid) == before
    gone = await lsp.error(
        protocol.COMPACT_DISCARD_DRAFT, {"sessionId": sid, "draftId": fresh["draftId"]}
    )
    assert gone.data["code"] == "draft_not_found"


async def test_the_model_summary_streams_with_progress_and_a_cancel_stops_it(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options={"anthropicApiKey": "sk-ant-test-draft-cancel"})
    sid, ids = await _session(lsp, 6)
    before = await lsp.render(sid)
    gate = threading.Event()
    script = fake_anthropic.reply("<summary>never written</summary>", hold_after=3, gate=gate)
    mark = lsp.recorder.mark()
    params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    request = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.COMPACT_PREVIEW, params)
    )
    try:
        begin = await lsp.progress_begin(after=mark)
        assert begin.value["cancellable"] is True
        assert await asyncio.to_thread(script.held.wait, 20)
        lsp.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=begin.token)
        )
        try:
            await request
            raise AssertionError("the preview finished despite the cancel")
        except JsonRpcException as exc:
            assert exc.code == REQUEST_CANCELLED
    finally:
        gate.set()
    await lsp.progress_end(begin.token)
    assert await lsp.render(sid) == before

    fake_anthropic.reply("<summary>## 1. Primary request\nQuestions, answered.</summary>")
    draft = await lsp.request(protocol.COMPACT_PREVIEW, params)
    assert draft["summarizer"] == "anthropic"
    assert draft["summary"].startswith("## 1. Primary request")
    assert draft["cost"]["summaryOffline"] is False and draft["cost"]["summaryOutputTokens"] > 0


async def test_the_usage_hover_shows_the_drafts_cost(lsp: Harness) -> None:
    sid, ids = await _session(lsp)
    draft = await lsp.request(
        protocol.COMPACT_PREVIEW, {"sessionId": sid, "direction": "from", "pivotMessageId": ids[20]}
    )
    where = {
        "textDocument": {"uri": protocol.session_uri(sid)},
        "position": {"line": 0, "character": 2},
    }
    text = (await lsp.request(types.TEXT_DOCUMENT_HOVER, where)).contents.value
    assert f"**Compaction draft** `{draft['draftId']}`: from" in text
    assert draft["cost"]["text"] in text and "the cached prefix survives" in text
    await lsp.append(sid, {"role": "user", "content": "more"})
    text = (await lsp.request(types.TEXT_DOCUMENT_HOVER, where)).contents.value
    assert "(stale: the session changed since; preview again)" in text


async def test_the_hover_of_a_draft_saved_by_an_earlier_version_says_so_as_apply_does(
    lsp: Harness,
) -> None:
    """A record of the first format is stale because this version cannot check it, not
    because the session changed (it did not): the hover gave the wrong reason."""
    sid, _ = await _session(lsp)
    draft = await lsp.request(protocol.COMPACT_PREVIEW, {"sessionId": sid})
    path = lsp.data_dir / "sessions" / f"{sid}.draft.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "version": 1}))
    where = {
        "textDocument": {"uri": protocol.session_uri(sid)},
        "position": {"line": 0, "character": 2},
    }

    text = (await lsp.request(types.TEXT_DOCUMENT_HOVER, where)).contents.value
    refused = await lsp.error(
        protocol.COMPACT_APPLY_DRAFT, {"sessionId": sid, "draftId": draft["draftId"]}
    )

    assert refused.baton_code == "draft_stale"
    assert "saved by an earlier version of Baton" in refused.message
    assert f"`{draft['draftId']}` (stale: saved by an earlier version of Baton" in text
    assert "the session changed since" not in text
