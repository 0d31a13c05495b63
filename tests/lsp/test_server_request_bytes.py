"""Over stdio: a conversation of seven screenshots, each under the API's 5 MB, is about 13K
tokens and over the 32 MB the API takes in a whole request. The server's send is refused
before the model is asked, in words that name the images and the way out; a compaction of
the span holding them makes the next send go out."""

from __future__ import annotations

import base64
import json

from lsp_harness import Harness
from lsprotocol import types

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-request-bytes-0123456789"
PNG_HEAD = b"\x89PNG\r\n\x1a\n"
SHOT = base64.b64encode(PNG_HEAD + bytes(range(256)) * (3_600_000 // 256)).decode()


def shot(n: int) -> dict[str, object]:
    image = {"type": "base64", "media_type": "image/png", "data": SHOT}
    text = {"type": "text", "text": f"shot {n}"}
    return {"role": "user", "content": [{"type": "image", "source": image}, text]}


async def test_seven_screenshots_are_refused_before_the_model_is_asked_then_compacted(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """Auto-compact off (it would compact them on its own first: below)."""
    options = {"anthropicApiKey": API_KEY, "autoCompact": {"enabled": False}}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    for n in range(7):
        await lsp.append(sid, shot(n), {"role": "assistant", "content": f"seen {n}"})

    error = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "and now?"})
    assert error.baton_code == "prompt_too_long"
    assert "7 images it holds" in error.message and "rewind to before them" in error.message
    assert "Traceback" not in error.message
    assert error.data["requestBytes"] > 32 * 1024 * 1024
    assert fake_anthropic.message_requests() == []

    ids = [m["id"] for m in (await lsp.get(sid))["messages"]]
    fake_anthropic.reply(
        "<summary>Seven screenshots of the settings page were looked at.</summary>"
    )
    await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[-2]}
    )
    fake_anthropic.reply("Now it fits.")
    reply = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid})
    assert reply["message"]["content"][0]["text"] == "Now it fits."
    sent = fake_anthropic.message_requests()[-1]
    assert sent.body["messages"][-1]["content"][-1]["text"] == "and now?"
    assert '"type": "image"' not in json.dumps(sent.body)  # the summary holds none of them


async def test_the_meter_and_the_session_document_say_the_request_is_over_32_mb(
    start_server,
) -> None:
    """A few thousand tokens, and the request refused: the usage is `blocking`, with the
    request's bytes, and the session document's usage diagnostic an Error saying why and
    the way out, before any send is tried."""
    options = {"anthropicApiKey": API_KEY, "autoCompact": {"enabled": False}}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    for n in range(7):
        await lsp.append(sid, shot(n), {"role": "assistant", "content": f"seen {n}"})

    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["usedTokens"] < usage["warningThreshold"]
    assert usage["state"] == "blocking"
    size = usage["requestSize"]
    assert size["requestBytes"] > size["limit"] == 32 * 1024 * 1024
    assert (size["images"], size["mediaBytes"]) == (7, len(SHOT) * 7)
    assert any("the 7 images it holds" in warning for warning in usage["warnings"])
    changed = lsp.recorder.of(protocol.USAGE_CHANGED)[-1]["usage"]
    assert changed["state"] == "blocking" and changed["requestSize"] == size

    published = await lsp.latest_diagnostics(sid)
    diagnostic = next(d for d in published.diagnostics if d.code == "context-usage")
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert "over the API's 32 MB whatever its tokens (7 images)" in diagnostic.message
    assert "compact the span holding them before the next send" in diagnostic.message


async def test_auto_compact_summarizes_the_span_holding_the_screenshots_and_says_so(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """A request over 32 MB is over the limit for auto-compact, whatever its tokens: the
    append that takes it there is followed by a compaction up to the last message holding
    an image (`all` would keep the recent ones verbatim), told as any auto-compaction is,
    and the next send goes out with no image in it."""
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
    sid = (await lsp.create())["sessionId"]
    for n in range(6):
        await lsp.append(sid, shot(n), {"role": "assistant", "content": f"seen {n}"})
    near = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert near["state"] == "warning" and near["requestSize"]["requestBytes"] < 32 * 1024 * 1024
    assert fake_anthropic.message_requests() == []  # near is not over: nothing compacted

    fake_anthropic.reply("<summary>Seven screenshots of the settings page.</summary>")
    mark = lsp.recorder.mark()
    await lsp.append(sid, shot(6), {"role": "assistant", "content": "seen 6"})
    told = await lsp.recorder.notification(protocol.AUTO_COMPACT, after=mark)
    assert told["outcome"] == "compacted", told["message"]
    assert told["message"].startswith("Auto-compacted: ")
    view = (await lsp.get(sid))["messages"]
    assert '"type": "image"' not in json.dumps(view)
    assert [m["content"][0].get("text") for m in view if m["kind"] == "message"] == ["seen 6"]
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["state"] == "ok" and "requestSize" not in usage

    fake_anthropic.reply("Now it fits.")
    reply = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "and now?"})
    assert reply["message"]["content"][0]["text"] == "Now it fits."
    assert '"type": "image"' not in json.dumps(fake_anthropic.message_requests()[-1].body)


async def test_an_auto_compaction_that_fails_says_the_send_is_refused_for_its_bytes(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """Not "the request goes out with 14,000 tokens in context": it does not, its bytes are
    over the API's limit, and the send says so."""
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
    sid = (await lsp.create())["sessionId"]
    for n in range(6):
        await lsp.append(sid, shot(n), {"role": "assistant", "content": f"seen {n}"})
    fake_anthropic.error(400, "invalid_request_error", "refused for the test", times=2)
    mark = lsp.recorder.mark()
    await lsp.append(sid, shot(6), {"role": "assistant", "content": "seen 6"})
    told = await lsp.recorder.notification(protocol.AUTO_COMPACT, after=mark)
    assert told["outcome"] == "failed"
    assert "its request is" in told["message"] and "over the API's 32 MB" in told["message"]

    mark = lsp.recorder.mark()
    error = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "and now?"})
    assert error.baton_code == "prompt_too_long" and "7 images it holds" in error.message
    told = await lsp.recorder.notification(protocol.AUTO_COMPACT, after=mark)
    assert told["outcome"] == "failed"
    assert "the send is refused: its request is" in told["message"]
    assert "goes out" not in told["message"]


async def test_the_session_document_offers_to_compact_the_span_holding_the_screenshots(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """The usage diagnostic's way out as an action, wherever the cursor is: a compaction up
    to the last message holding an image, which takes the request under the limit."""
    options = {"anthropicApiKey": API_KEY, "autoCompact": {"enabled": False}}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    for n in range(7):
        await lsp.append(sid, shot(n), {"role": "assistant", "content": f"seen {n}"})
    top = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    asked = {"textDocument": {"uri": protocol.session_uri(sid)}, "range": top}
    actions = await lsp.request(
        types.TEXT_DOCUMENT_CODE_ACTION, {**asked, "context": {"diagnostics": []}}
    )
    [action] = [a for a in actions if "7 images" in a.title]
    assert action.title == "Compact up to the last of the 7 images (the request is over 32 MB)"
    assert action.disabled is None and action.command is not None
    ids = [m["id"] for m in (await lsp.get(sid))["messages"]]
    assert list(action.command.arguments or []) == [{"sessionId": sid, "pivotMessageId": ids[-2]}]

    fake_anthropic.reply("<summary>Seven screenshots of the settings page.</summary>")
    await lsp.command(action.command.command, *action.command.arguments)
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["state"] == "ok" and "requestSize" not in usage
    actions = await lsp.request(
        types.TEXT_DOCUMENT_CODE_ACTION, {**asked, "context": {"diagnostics": []}}
    )
    assert not [a for a in actions if "images" in a.title]


async def test_a_compaction_that_keeps_the_screenshots_verbatim_says_so(
    start_server,
) -> None:
    """`all` keeps its recent window whole: with 16,000 tokens kept, eight screenshots stay,
    38 MB, and every request after it would be refused. Its preview (a dry run) says so,
    and what to do instead."""
    options = {
        "anthropicApiKey": API_KEY,
        "autoCompact": {"enabled": False},
        "summarizer": "extractive",
        "keepWindow": {"minTokens": 16_000, "maxTokens": 200_000},
    }
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    for n in range(9):
        await lsp.append(sid, shot(n), {"role": "assistant", "content": f"seen {n}"})

    result = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "all", "dryRun": True}
    )
    [warning] = [w for w in result["warnings"] if "keeps verbatim" in w]
    assert warning.startswith("The 8 images it keeps verbatim are ")
    assert "over the API's limit of 33,554,432 (32 MB)" in warning
    assert "Compact up to the last of them instead" in warning
