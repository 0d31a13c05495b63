"""R5, the key: a sentinel key never on disk, in the log or in an answer, whatever its shape,
even when the API endpoint echoes it back (a misconfigured proxy)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsp_harness import WAIT_SECONDS, server_env
from test_server_malformed import RawPipe
from test_server_transports import StderrLines

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

# not shaped like an Anthropic key, and with characters that JSON, repr and URLs escape
SENTINEL = "corp/proxy:TOKEN-7f3a9c'\"e1 +d4"


class Peer(RawPipe):
    """A raw pipe that keeps every message it received."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.seen: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        message = await super().receive()
        self.seen.append(message)
        return message

    async def call(self, msg_id: int, method: str, params: Any) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self.response(msg_id)


def leaks(text: str) -> list[str]:
    forms = {SENTINEL, json.dumps(SENTINEL)[1:-1], repr(SENTINEL)[1:-1], "TOKEN-7f3a9c"}
    return [form for form in forms if form in text]


async def test_the_key_never_reaches_the_log_the_disk_or_an_answer(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.echo_key = True
    data_dir = tmp_path / "data"
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "baton", "serve", "--log-level", "DEBUG"],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(data_dir),
    )
    stderr = StderrLines(process.stderr)
    peer = Peer(process)
    try:
        options = {"anthropicApiKey": SENTINEL, "baton": {"summarizer": "anthropic"}}
        await peer.call(0, "initialize", {"capabilities": {}, "initializationOptions": options})
        await peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        # a model the endpoint does not know: the limits lookup fails with the key echoed
        created = await peer.call(1, protocol.SESSION_CREATE, {"model": "claude-echo-1"})
        sid = created["result"]["sessionId"]
        await peer.call(2, protocol.USAGE, {"sessionId": sid})
        await stderr.wait_for("model limits for claude-echo-1")
        assert any(r.path.startswith("/v1/models/") for r in fake_anthropic.requests)

        fake_anthropic.error(401, "authentication_error", "invalid key")
        denied = await peer.call(3, protocol.SESSION_SEND, {"sessionId": sid, "content": "hi"})
        assert denied["error"]["data"]["code"] == "api_error"
        assert "[redacted]" in denied["error"]["message"]

        # the key in a request's params, with an error that quotes nothing of it
        await peer.call(4, protocol.SESSION_CREATE, {"title": 5, "systemPrompt": SENTINEL})
        await peer.call(5, "shutdown", None)
        await peer.send({"jsonrpc": "2.0", "method": "exit"})
        await asyncio.wait_for(process.wait(), WAIT_SECONDS)
        await stderr.task
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    sent = [r.api_key for r in fake_anthropic.requests]
    assert SENTINEL in sent  # the key did go where it belongs
    assert "[redacted]" in stderr.text
    assert leaks(stderr.text) == []
    assert leaks(json.dumps(peer.seen)) == []
    on_disk = [p for p in data_dir.rglob("*") if p.is_file()]
    assert on_disk
    for path in on_disk:
        assert leaks(path.read_bytes().decode("utf-8", "replace")) == [], path
