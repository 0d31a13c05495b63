"""An image over the API's 5 MB per image, in a prompt, is refused before anything is
stored: stored, it would go with every later request of the session, each refused."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from acp import RequestError

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

PNG_HEAD = b"\x89PNG\r\n\x1a\n"
LIMIT = 5 * 1024 * 1024  # the API's, on the base64 data sent
# 4 MB of PNG, whose base64 is over the limit the API measures
OVER = base64.b64encode(PNG_HEAD + b"\x00" * (4 * 1024 * 1024)).decode()
AT_LIMIT = base64.b64encode(PNG_HEAD + b"\x00" * (LIMIT // 4 * 3 - 8)).decode()


async def test_an_image_over_the_apis_limit_is_refused_and_nothing_is_stored(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("A blank image.", usage={"input_tokens": 900, "output_tokens": 4})
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        before = transcript.read_bytes()
        text = {"type": "text", "text": "What is in this screenshot?"}
        embedded = {
            "type": "resource",
            "resource": {"uri": "file:///shot.png", "blob": OVER, "mimeType": "image/png"},
        }
        for image in ({"type": "image", "data": OVER, "mimeType": "image/png"}, embedded):
            with pytest.raises(RequestError) as refused:
                await agent.request("session/prompt", {"sessionId": sid, "prompt": [text, image]})
            assert refused.value.data["code"] == "invalid_params"
            message = str(refused.value)
            assert "prompt.1: the image is too large" in message
            assert f"{len(OVER):,} bytes" in message and "5,242,880 (5 MB)" in message
        assert transcript.read_bytes() == before
        assert fake_anthropic.message_requests() == []
        at_limit = {"type": "image", "data": AT_LIMIT, "mimeType": "image/png"}
        answer = await agent.request(
            "session/prompt", {"sessionId": sid, "prompt": [text, at_limit]}
        )
        assert answer["stopReason"] == "end_turn"
        (sent,) = fake_anthropic.message_requests()
        assert sent.body["messages"][-1]["content"][1]["source"]["data"] == AT_LIMIT


PDF_LIMIT = 32 * 1024 * 1024  # the API's on a whole request: no request can hold more
# 25 MB of PDF, whose base64 is over what any request may hold
PDF_OVER = base64.b64encode(b"%PDF-1.7\n" + b"\x00" * (25 * 1024 * 1024)).decode()


async def test_a_pdf_over_the_apis_request_limit_is_refused_and_nothing_is_stored(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        before = transcript.read_bytes()
        text = {"type": "text", "text": "Summarize this report"}
        pdf = {
            "type": "resource",
            "resource": {
                "uri": "file:///report.pdf",
                "blob": PDF_OVER,
                "mimeType": "application/pdf",
            },
        }
        with pytest.raises(RequestError) as refused:
            await agent.request("session/prompt", {"sessionId": sid, "prompt": [text, pdf]})
        assert refused.value.data["code"] == "invalid_params"
        message = str(refused.value)
        assert "prompt.1: the PDF is too large" in message
        assert f"{len(PDF_OVER):,} bytes" in message and "33,554,432 (32 MB)" in message
        assert transcript.read_bytes() == before
        assert fake_anthropic.message_requests() == []
        assert agent.recorder.updates(sid, "session_info_update") == []  # nothing named it
