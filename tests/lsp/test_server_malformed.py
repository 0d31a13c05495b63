"""Malformed JSON-RPC over a raw pipe: every bad message gets an error, the server keeps serving."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsp_harness import WAIT_SECONDS, spawn_stdio

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class RawPipe:
    """A JSON-RPC peer that writes whatever bytes it is given."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(json.dumps(message).encode())

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), WAIT_SECONDS)
            assert line, "the server closed its output"
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            elif line in (b"\r\n", b"\n"):
                break
        body = await self.process.stdout.readexactly(length)
        result: dict[str, Any] = json.loads(body)
        return result

    async def response(self, msg_id: Any) -> dict[str, Any]:
        """The response to `msg_id`, skipping notifications and server requests."""
        while True:
            message = await self.receive()
            if "method" not in message and message.get("id") == msg_id:
                return message


async def test_garbage_wrong_types_and_unknown_methods_get_errors(tmp_path: Path) -> None:
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    pipe = RawPipe(process)
    try:
        await pipe.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        )
        assert "capabilities" in (await pipe.response(1))["result"]
        await pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

        await pipe.send_bytes(b"{this is not json")
        assert (await pipe.response(None))["error"]["code"] == PARSE_ERROR
        await pipe.send_bytes(b"\xff\xfe\x00garbage")
        assert (await pipe.response(None))["error"]["code"] == PARSE_ERROR
        await pipe.send_bytes(b"[1, 2, 3]")
        assert (await pipe.response(None))["error"]["code"] == INVALID_REQUEST
        # a batch: each request in it answered under its own id, nothing of it run
        create = {"jsonrpc": "2.0", "method": "baton/session/create", "params": {}}
        note = {"jsonrpc": "2.0", "method": "baton/activeEditor", "params": {}}
        await pipe.send_bytes(
            json.dumps([{**create, "id": 21}, note, {**create, "id": "b"}]).encode()
        )
        for msg_id in (21, "b"):
            refused = (await pipe.response(msg_id))["error"]
            assert refused["code"] == INVALID_REQUEST and "batch" in refused["message"]

        # an id with neither a method nor a result: no request, no response
        await pipe.send({"jsonrpc": "2.0", "id": 903})
        assert (await pipe.response(903))["error"]["code"] == INVALID_REQUEST

        await pipe.send({"jsonrpc": "2.0", "id": 2, "method": "baton/nope", "params": {}})
        assert (await pipe.response(2))["error"]["code"] == METHOD_NOT_FOUND

        await pipe.send({"jsonrpc": "2.0", "id": 3, "method": "baton/session/get", "params": [1]})
        wrong = (await pipe.response(3))["error"]
        assert wrong["code"] == INVALID_PARAMS
        assert wrong["data"]["code"] == "invalid_params"
        assert wrong["data"]["problems"] == ["params must be an object, got list"]

        # the server's own checks, not only the params' types, list what was wrong
        long_title = {"title": "x" * 201}
        await pipe.send(
            {"jsonrpc": "2.0", "id": 11, "method": "baton/session/create", "params": long_title}
        )
        assert (await pipe.response(11))["error"]["data"]["problems"] == [
            "title must be at most 200 characters"
        ]

        await pipe.send({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": "x"})
        hover = (await pipe.response(4))["error"]
        assert hover["code"] == INVALID_PARAMS

        await pipe.send(
            {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"x": 1}}
        )
        assert (await pipe.response(5))["error"]["code"] == INVALID_PARAMS
        # `arguments` as the argument object itself, not an array holding it
        await pipe.send(
            {
                "jsonrpc": "2.0",
                "id": 12,
                "method": "workspace/executeCommand",
                "params": {"command": "baton.compactUpTo", "arguments": {"sessionId": "s", "x": 1}},
            }
        )
        bare = (await pipe.response(12))["error"]
        assert bare["code"] == INVALID_PARAMS
        assert "arguments must be an array" in bare["message"], bare

        # notifications have nobody to answer; a bad one is dropped
        await pipe.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": 5})
        await pipe.send({"jsonrpc": "2.0", "method": "baton/activeEditor", "params": [None]})

        await pipe.send(
            {"jsonrpc": "2.0", "id": 6, "method": "baton/session/create", "params": {"title": "ok"}}
        )
        created = (await pipe.response(6))["result"]
        assert created["title"] == "ok"

        # JSON-RPC 2.0 lets a request leave out its params: as `{}`
        await pipe.send({"jsonrpc": "2.0", "id": 8, "method": "baton/session/list"})
        assert [s["title"] for s in (await pipe.response(8))["result"]["sessions"]] == ["ok"]
        await pipe.send({"jsonrpc": "2.0", "id": 9, "method": "baton/session/create"})
        assert (await pipe.response(9))["result"]["title"] == "New conversation"

        # a request with a null id cannot be answered as itself: refused, and not run
        await pipe.send({"jsonrpc": "2.0", "id": None, "method": "baton/session/create"})
        assert (await pipe.response(None))["error"]["code"] == INVALID_REQUEST
        await pipe.send({"jsonrpc": "2.0", "id": 10, "method": "baton/session/list"})
        assert len((await pipe.response(10))["result"]["sessions"]) == 2

        await pipe.send({"jsonrpc": "2.0", "id": 7, "method": "shutdown"})
        assert (await pipe.response(7))["result"] is None
        await pipe.send({"jsonrpc": "2.0", "method": "exit"})
        assert await asyncio.wait_for(process.wait(), WAIT_SECONDS) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_params_that_do_not_fit_lsp_are_refused_naming_the_field(tmp_path: Path) -> None:
    """ "invalid params for initialize" said nothing of which field: a person reading it
    could not tell the processId "x" from any other. The field is named as the protocol
    spells it, its value never quoted; the client may then initialize as it should."""
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    pipe = RawPipe(process)
    try:
        bad = {"processId": "x-4711", "capabilities": {}}
        await pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": bad})
        refused = (await pipe.response(1))["error"]
        assert refused["code"] == INVALID_PARAMS
        assert "params.processId" in refused["message"], refused
        assert refused["data"]["problems"] == ["params.processId: a value of the wrong type"]
        assert "x-4711" not in json.dumps(refused)

        await pipe.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}})
        missing = (await pipe.response(2))["error"]
        assert missing["data"]["problems"] == ["params.capabilities: missing"]

        good = {"processId": None, "capabilities": {}}
        await pipe.send({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": good})
        assert "capabilities" in (await pipe.response(3))["result"]
        await pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

        where = {"textDocument": {"uri": "file:///a.py"}, "position": {"line": "one"}}
        await pipe.send(
            {"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": where}
        )
        hover = (await pipe.response(4))["error"]
        assert hover["code"] == INVALID_PARAMS
        assert hover["data"]["problems"] == [
            "params.position.line: a value of the wrong type",
            "params.position.character: missing",
        ], hover
    finally:
        process.kill()
        await process.wait()


async def test_stdout_carries_only_the_wire(tmp_path: Path) -> None:
    process = await spawn_stdio(tmp_path / "data")
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    body = json.dumps(request).encode()
    exit_body = json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()
    frames = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(b), b) for b in (body, exit_body))
    out, err = await asyncio.wait_for(process.communicate(frames), WAIT_SECONDS)
    assert out.startswith(b"Content-Length: ")
    remaining = out
    while remaining:  # every byte belongs to a framed message
        header, _, rest = remaining.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        json.loads(rest[:length])
        remaining = rest[length:]
    assert b"Content-Length" not in err
