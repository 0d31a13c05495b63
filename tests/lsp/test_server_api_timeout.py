"""A request the API does not answer in time fails as `api_error` (BATON_API_TIMEOUT)."""

from __future__ import annotations

import threading

from lsp_harness import Harness

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-timeout-0123456789"


async def test_a_reply_that_stalls_past_the_timeout_is_an_api_error(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(
        options={"anthropicApiKey": API_KEY}, env={"BATON_API_TIMEOUT": "0.5"}
    )
    sid = (await lsp.create())["sessionId"]
    gate = threading.Event()  # never set while the request waits: the fake stalls
    fake_anthropic.reply("too late", hold_after=0, gate=gate)
    try:
        error = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "hello?"})
    finally:
        gate.set()
    assert error.baton_code == "api_error"
    view = (await lsp.get(sid))["messages"]
    assert [m["id"] for m in view] == [error.data["promptMessageId"]]  # no reply appended
