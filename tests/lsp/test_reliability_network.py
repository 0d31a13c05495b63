"""R5, the network: `--tcp` and `--ws` let in only a client with the token, and a WebSocket
only from a loopback page; a refused connection leaves the server serving."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_server_transports import (
    connect_client,
    framed,
    initialize,
    start_watched,
    stop,
)

from baton import protocol

UNAUTHORIZED_RPC = -32803


async def tcp_first_message(host: str, port: int, message: dict[str, Any]) -> dict[str, Any]:
    """Send one message on a fresh TCP connection; the answer, then the server closes."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(framed(message))
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
        length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        answer: dict[str, Any] = json.loads(await reader.readexactly(length))
        assert await asyncio.wait_for(reader.read(), 20) == b""  # then closed
        return answer
    finally:
        writer.close()


async def ws_connect(host: str, port: int, **options: Any) -> Any:
    from websockets.asyncio.client import connect

    query = options.pop("query", "")
    return await connect(f"ws://{host}:{port}/{query}", **options)


async def test_tcp_without_the_token_is_refused_and_the_server_serves_on(tmp_path: Path) -> None:
    process, stderr, host, port, token = await start_watched(tmp_path, "--tcp")
    try:
        assert len(token) >= 20
        for given in (None, "wrong-token", 12345, token.upper()):
            message = initialize(None)
            if given is not None:
                message["params"]["initializationOptions"] = {"batonToken": given}
            answer = await tcp_first_message(host, port, message)
            assert answer["id"] == 1
            assert answer["error"]["code"] == UNAUTHORIZED_RPC
            assert answer["error"]["data"]["code"] == "unauthorized"
            assert "batonToken" in answer["error"]["message"]
        # a request other than initialize, before the token: refused the same way
        listing = {"jsonrpc": "2.0", "id": 2, "method": protocol.SESSION_LIST, "params": {}}
        assert (await tcp_first_message(host, port, listing))["error"]["code"] == UNAUTHORIZED_RPC
        await stderr.wait_for("refused a network client")

        lsp, _ = await connect_client(tmp_path, "--tcp", host, port, token)
        assert (await lsp.create(title="let in"))["title"] == "let in"
        await lsp.close()
        assert await asyncio.wait_for(process.wait(), 20) == 0
        await stderr.task
        assert token not in stderr.text.replace(f"baton: token {token}", "")
    finally:
        await stop(process, stderr)


async def test_the_token_can_come_from_the_environment(tmp_path: Path) -> None:
    chosen = "chosen-token-0123456789"
    env = {"BATON_TOKEN": chosen}
    process, stderr, host, port, token = await start_watched(tmp_path, "--tcp", env)
    try:
        assert token == chosen
        lsp, _ = await connect_client(tmp_path, "--tcp", host, port, chosen)
        assert "sessions" in await lsp.request(protocol.SESSION_LIST)
        await lsp.close()
        await stderr.task
        assert chosen not in stderr.text  # never logged
    finally:
        await stop(process, stderr)


async def test_a_websocket_from_a_foreign_page_is_refused(tmp_path: Path) -> None:
    from websockets.exceptions import InvalidStatus

    process, stderr, host, port, token = await start_watched(tmp_path, "--ws")
    try:
        foreign = ["http://evil.example", "https://127.0.0.1.evil.example", "null", "file://"]
        for origin in foreign:
            headers = {"Origin": origin, "Authorization": f"Bearer {token}"}
            with pytest.raises(InvalidStatus) as refused:
                await ws_connect(host, port, additional_headers=headers)
            assert refused.value.response.status_code == 403, origin
        await stderr.wait_for("refused a WebSocket handshake from origin")
        # a loopback page with the token is let in, and served
        good = {"Origin": "http://localhost:5173", "Authorization": f"Bearer {token}"}
        websocket = await ws_connect(host, port, additional_headers=good)
        await websocket.send(json.dumps(initialize(None)))
        assert "result" in json.loads(await asyncio.wait_for(websocket.recv(), 20))
        await websocket.close()
    finally:
        await stop(process, stderr)


async def test_a_websocket_token_as_header_query_or_option(tmp_path: Path) -> None:
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    process, stderr, host, port, token = await start_watched(tmp_path, "--ws")
    try:
        wrong = {"Authorization": "Bearer not-the-token"}
        with pytest.raises(InvalidStatus) as refused:
            await ws_connect(host, port, additional_headers=wrong)
        assert refused.value.response.status_code == 401
        with pytest.raises(InvalidStatus):
            await ws_connect(host, port, query="?token=nope")

        # no token at all: the first message is refused and the connection closed (1008)
        websocket = await ws_connect(host, port)
        await websocket.send(json.dumps(initialize(None)))
        answer = json.loads(await asyncio.wait_for(websocket.recv(), 20))
        assert answer["error"]["data"]["code"] == "unauthorized"
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(websocket.recv(), 20)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008

        websocket = await ws_connect(host, port, query=f"?token={token}")
        await websocket.send(json.dumps(initialize(None)))
        assert "result" in json.loads(await asyncio.wait_for(websocket.recv(), 20))
        # a WebSocket message is read like a frame's body: parse errors and limits hold
        await websocket.send(b"{not json")
        assert json.loads(await asyncio.wait_for(websocket.recv(), 20))["error"]["code"] == -32700
        deep = "[" * 3000 + "]" * 3000
        await websocket.send(
            f'{{"jsonrpc": "2.0", "id": 7, "method": "baton/usage", "params": {{"x": {deep}}}}}'
        )
        answer = json.loads(await asyncio.wait_for(websocket.recv(), 20))
        assert answer["id"] == 7 and answer["error"]["data"]["code"] == "invalid_params"
        await websocket.close()
    finally:
        await stop(process, stderr)


async def test_a_websocket_message_before_the_token_is_held_to_the_first_messages_limit(
    tmp_path: Path,
) -> None:
    """As a TCP frame: before its token a message is at most 1 MiB (an 8 MiB one was read
    and parsed whole, so unauthenticated connections could grow the server by GBs); with
    the token, the ordinary limit; the server serves on either way."""
    from websockets.exceptions import ConnectionClosed

    process, stderr, host, port, token = await start_watched(tmp_path, "--ws")
    try:
        big = initialize(None)
        big["params"]["initializationOptions"] = {"pad": "x" * (2 * 1024 * 1024)}
        websocket = await ws_connect(host, port, max_size=None)
        await websocket.send(json.dumps(big))
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(websocket.recv(), 20)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009

        websocket = await ws_connect(host, port, query=f"?token={token}", max_size=None)
        await websocket.send(json.dumps(initialize(None)))
        assert "result" in json.loads(await asyncio.wait_for(websocket.recv(), 20))
        create = {"title": "big", "systemPrompt": "y" * (2 * 1024 * 1024)}
        request = {"jsonrpc": "2.0", "id": 5, "method": protocol.SESSION_CREATE, "params": create}
        await websocket.send(json.dumps(request))
        while (answer := json.loads(await asyncio.wait_for(websocket.recv(), 20))).get("id") != 5:
            pass
        assert answer["result"]["title"] == "big"
        await websocket.close()
    finally:
        await stop(process, stderr)
