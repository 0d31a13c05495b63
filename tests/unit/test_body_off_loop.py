"""A request's JSON body is encoded in a worker thread, a content block at a time, into the
bytes the SDK's own encoder makes: the SDK encoded it on the event loop, in one call, and a
send of 29.6 MB of images held every other session 0.34 s."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from test_off_loop import Gate

from baton.core.model_api import body_off_loop
from baton.core.model_api.client import AnthropicClient
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]


def sdk_bytes(body: dict[str, Any]) -> bytes:
    """The body as the SDK's encoder makes it (its settings: compact, UTF-8, no NaN)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def image(n: int) -> dict[str, Any]:
    data = base64.b64encode(bytes(range(256)) * (40 + n)).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1_000,
    "system": "Réponds en français — «citations» et emoji 🎉",
    "messages": [
        {"role": "user", "content": [image(1), image(2), {"type": "text", "text": 'what?\n\t"'}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Read",
                    "input": {"path": "/a/b.py", "deep": {"deeper": [1, 2.5, None, True]}},
                }
            ],
        },
        {"role": "user", "content": "a plain string"},
    ],
    "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {}}}],
    "stream": True,
    "thinking": {"type": "enabled", "budget_tokens": 2_000},
}


def test_a_body_is_encoded_piece_by_piece_into_the_sdks_bytes() -> None:
    assert body_off_loop.encoded(BODY) == sdk_bytes(BODY)
    assert body_off_loop.encoded({}) == b"{}"
    assert body_off_loop.encoded({"messages": []}) == b'{"messages":[]}'


class Options(pydantic.BaseModel):
    """The SDK's request options, as far as the hook reads them."""

    json_data: Any = None
    extra_json: Any = None
    files: Any = None
    content: Any = None


class OlderOptions(pydantic.BaseModel):
    """An SDK's options without `content`: its body stays the SDK's to encode."""

    json_data: Any = None


@pytest.mark.parametrize(
    "options",
    [
        Options(json_data={"x": float("nan")}),  # not JSON: the SDK says so in its words
        Options(json_data={"x": object()}),  # a value only the SDK's encoder may know
        Options(json_data={"x": 1}, extra_json={"y": 2}),  # an extra body still to merge
        Options(json_data=None),  # no body
        OlderOptions(json_data={"x": 1}),
    ],
    ids=["nan", "object", "extra", "none", "older sdk"],
)
async def test_what_the_hook_cannot_encode_is_left_to_the_sdk(options: pydantic.BaseModel) -> None:
    before = options.model_copy()
    assert await body_off_loop.encoded_off_loop(options) is options
    assert options == before


async def test_a_request_body_is_encoded_off_the_event_loop_while_it_goes_on(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = Gate()
    encoded = body_off_loop.encoded

    def held(body: dict[str, Any]) -> bytes:
        gate.hold()
        return encoded(body)

    monkeypatch.setattr(body_off_loop, "encoded", held)
    fake_anthropic.reply("I see two images.")
    messages = BODY["messages"][:1]
    reply = asyncio.ensure_future(
        anthropic_client().stream_reply(
            model="claude-sonnet-4-5", system=None, messages=messages, tools=None, max_tokens=50
        )
    )
    try:
        assert await gate.wait_entered()
        assert len(gate.threads) == 1 and gate.threads[0] != threading.get_ident()
        await asyncio.sleep(0.01)  # the loop goes on while the body is encoded
        assert not reply.done() and not fake_anthropic.message_requests()
    finally:
        gate.release.set()
    assert (await reply).content[0].text == "I see two images."  # type: ignore[union-attr]
    [sent] = fake_anthropic.message_requests()
    assert sent.body["messages"] == messages and sent.body["stream"] is True
    assert sent.headers["content-type"] == "application/json"
