"""What a client sees during `baton/session/send` before the model answers, and hovers then."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from lsp_harness import WAIT_SECONDS, Harness, conversation
from lsprotocol import types
from test_server_tools import EDIT, RENAME, WITH_KEY, Editor, asking

from baton import protocol
from baton.core.compaction import engine
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.server import create_server
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

API_KEY = "sk-ant-test-steps-0123456789"
SMALL = {
    "anthropicApiKey": API_KEY,
    "summarizer": "extractive",
    "contextWindow": 20_000,  # auto-compact threshold 13,400
    "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
    "autoCompact": {"enabled": False},
}


def hover_params(session_id: str, line: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": protocol.session_uri(session_id)},
        "position": {"line": line, "character": 0},
    }


async def test_the_prompt_and_an_auto_compaction_are_published_before_the_model_answers(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(options=SMALL)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(19, words=90))
    before = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert before["usedTokens"] >= before["autoCompactThreshold"]
    rendered = await lsp.render(sid)  # the document as the editor last showed it
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"autoCompact": {"enabled": True}}})
    )
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["autoCompactEnabled"] is True
    )

    gate = threading.Event()
    script = fake_anthropic.reply("the answer", hold_after=0, gate=gate)  # holds every event
    mark = lsp.recorder.mark()
    pending = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(
            protocol.SESSION_SEND, {"sessionId": sid, "content": "what next?"}
        )
    )
    try:
        appended = await lsp.recorder.notification(
            protocol.SESSION_CHANGED, lambda p: p["reason"] == "append", after=mark
        )
        compacted = await lsp.recorder.notification(
            protocol.SESSION_CHANGED, lambda p: p["reason"] == "compact", after=mark
        )
        assert appended["sessionId"] == compacted["sessionId"] == sid
        order = [p for m, p in lsp.recorder.received[mark:] if m == protocol.SESSION_CHANGED]
        assert [p["reason"] for p in order][:2] == ["append", "compact"]
        usage = await lsp.recorder.notification(
            protocol.USAGE_CHANGED,
            lambda p: p["usage"]["usedTokens"] < before["autoCompactThreshold"],
            after=mark,
        )
        assert usage["sessionId"] == sid
        assert await asyncio.to_thread(script.held.wait, 20)
        assert lsp.recorder.of(protocol.SESSION_DELTA) == []  # all of it before any text

        # the document moved on with the view, so a hover where the old first message
        # was is answered from the new rendering (an error would raise here)
        latest = await lsp.render(sid)
        assert latest["version"] > rendered["version"]
        assert latest["messages"][0]["messageId"] != rendered["messages"][0]["messageId"]
        first_line = rendered["messages"][0]["range"]["start"]["line"]
        await lsp.request(types.TEXT_DOCUMENT_HOVER, hover_params(sid, first_line))
    finally:
        gate.set()
    reply = await pending
    assert reply["message"]["content"][0]["text"] == "the answer"


async def test_a_reply_whose_call_waits_for_the_user_is_seen_while_the_user_is_asked(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """A tool round's reply was told only once its calls had run: while an edit waited for
    the user's permission, the meter, the usage notification and the diagnostics still
    showed the prompt alone, and no `sessionChanged` told the call being asked about."""
    lsp: Harness = await start_server(options=WITH_KEY, capabilities=asking())
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n    return s\n")
    editor = Editor(lsp, outcome="never")  # the user takes their time
    sid = (await lsp.create())["sessionId"]
    usage = {"input_tokens": 4_500, "output_tokens": 20}
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use", usage=usage)
    fake_anthropic.reply("Left it as it was.")
    mark = lsp.recorder.mark()
    pending = asyncio.ensure_future(
        lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    )
    try:
        await asyncio.wait_for(editor.waiting.wait(), WAIT_SECONDS)
        now = await lsp.request(protocol.USAGE, {"sessionId": sid})
        assert now["usedTokens"] == 4_520
        told = [p for m, p in lsp.recorder.received[mark:] if m == protocol.USAGE_CHANGED]
        assert told[-1]["usage"]["usedTokens"] == now["usedTokens"]
        published = await lsp.latest_diagnostics(sid)
        headline = next(d for d in published.diagnostics if d.code == "context-usage")
        assert headline.message == now["text"]["headline"]
        changes = [
            p["reason"] for m, p in lsp.recorder.received[mark:] if m == protocol.SESSION_CHANGED
        ]
        assert changes == ["append", "reply"]
    finally:
        editor.hold.set()
    assert (await pending)["message"]["content"][0]["text"] == "Left it as it was."


async def test_hover_on_a_line_whose_message_left_the_view_names_what_is_there_now(
    tmp_path: Path,
) -> None:
    """The view changes with no event (a compaction run in process): the hover is answered
    from the session as it now stands, never from the rendering cached before."""
    service = BatonService(Settings(data_dir=str(tmp_path / "data")))
    server = create_server(service)
    try:
        sid = service.create().session_id
        inputs = [MessageInput.model_validate(m) for m in conversation(4)]
        first_id = service.session(sid).append(inputs).message_ids[0]
        rendered, _, _ = server.documents.render(sid)
        section = next(s for s in rendered.sections if s.message_id == first_id)
        request = CompactRequest(direction="up_to", pivot_message_id=first_id)
        await engine.compact(service.session(sid), request, service.compaction.context())
        hover = server.protocol.fm.features[types.TEXT_DOCUMENT_HOVER]
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=protocol.session_uri(sid)),
            position=types.Position(line=section.start_line, character=0),
        )
        answer = await hover(params)
        assert answer is not None and first_id not in answer.contents.value
        assert "summary" in answer.contents.value
    finally:
        await service.close()


async def test_a_reply_that_streamed_through_a_compaction_does_not_anchor_the_meter(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """A compaction committed while a reply streamed: the reply's usage counted the view
    its request sent, the one before the compaction, yet it anchored the meter as the
    API's count of the view after it (basis "api", not estimated), so the meter showed the
    context the compaction had just freed until the next reply."""
    lsp: Harness = await start_server(options={**WITH_KEY, "summarizer": "extractive"})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    gate = threading.Event()
    before_compaction = {"input_tokens": 90_000, "output_tokens": 20}
    script = fake_anthropic.reply("the answer", usage=before_compaction, hold_after=3, gate=gate)
    pending = asyncio.ensure_future(
        lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "what next?"})
    )
    try:
        assert await asyncio.to_thread(script.held.wait, WAIT_SECONDS)
        compacted = await lsp.request(
            protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[5]}
        )
    finally:
        gate.set()
    reply = await pending

    usage = reply["usage"]
    assert usage["basis"] == "estimate" and usage["estimated"]  # no usage counts this view
    assert usage["usedTokens"] < 10_000 and compacted["postTokens"] < 10_000
    restarted = await start_server(options=WITH_KEY)  # a fresh load counts it so too
    assert (await restarted.get(sid))["usage"]["usedTokens"] == usage["usedTokens"]
