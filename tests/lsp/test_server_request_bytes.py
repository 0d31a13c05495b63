"""Over stdio: a conversation of seven screenshots, each under the API's 5 MB, is about 13K
tokens and over the 32 MB the API takes in a whole request. The server's send is refused
before the model is asked, in words that name the images and the way out; a compaction of
the span holding them makes the next send go out."""

from __future__ import annotations

import base64
import json

from lsp_harness import Harness

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
