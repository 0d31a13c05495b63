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
    lsp: Harness = await start_server(options={"anthropicApiKey": API_KEY})
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
