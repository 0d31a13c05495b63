"""WebSocket messages both ways: one JSON-RPC message per WebSocket message (no headers),
read with a frame body's checks and written through pygls's writer interface."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable
from typing import Any

from baton.lsp.transport import message_body

log = logging.getLogger(__name__)

MESSAGE_TOO_BIG = 1009  # WebSocket close code


def message_limit(websocket: Any, limit: int | None = None) -> int:
    """The largest message the connection takes (set to `limit` when given)."""
    state = websocket.protocol
    name = "max_message_size" if hasattr(state, "max_message_size") else "max_size"  # < 14
    if limit is not None:
        setattr(state, name, limit)
    return int(getattr(state, name) or 0)


async def run_websocket_messages(
    websocket: Any, protocol: message_body.Answering, stop_event: threading.Event
) -> None:
    """One message per WebSocket message (no headers); the same checks as a frame's body."""
    from websockets.exceptions import ConnectionClosed

    while not stop_event.is_set():
        try:
            data = await websocket.recv(decode=False)
        except ConnectionClosed as exc:
            if exc.sent is not None and exc.sent.code == MESSAGE_TOO_BIG:
                # a message cannot be skipped unread: the library closed the connection
                limit = message_limit(websocket)
                log.warning("closed the WebSocket: a message over the limit of %d bytes", limit)
            break
        message_body.handle_body(protocol, data if isinstance(data, bytes) else data.encode())
    await websocket.close()


class WebSocketWriter:
    """pygls's writer interface over a WebSocket, keeping its sends so they can be awaited."""

    def __init__(self, websocket: Any) -> None:
        self._websocket = websocket
        self._sending: set[asyncio.Future[Any]] = set()

    def write(self, data: bytes) -> Awaitable[None]:
        sending: asyncio.Future[None] = asyncio.ensure_future(self._websocket.send(data))
        self._sending.add(sending)
        sending.add_done_callback(self._sent)
        return sending

    def _sent(self, sending: asyncio.Future[Any]) -> None:
        self._sending.discard(sending)
        if not sending.cancelled() and sending.exception() is not None:
            log.info("a WebSocket send failed: %s", sending.exception())

    def close(self) -> Awaitable[None]:
        result: Awaitable[None] = self._websocket.close()
        return result

    async def drain(self) -> None:
        """Until every message written so far is sent (or failed)."""
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)
