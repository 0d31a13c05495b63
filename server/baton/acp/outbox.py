"""Every `session/update` the agent sends, in the order it was raised: typed updates from the
SDK's schema and raw ones the SDK does not know yet (the compaction updates)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Protocol

from pydantic import BaseModel

UPDATE = "session/update"


class Poster(Protocol):
    """What the outbox needs of the transport: a message queued at once, in call order,
    behind every message handed over before it (the SDK's answers and requests too)."""

    def post(self, message: dict[str, Any]) -> None: ...

    async def drain(self) -> None: ...


class Outbox:
    """Updates handed to the transport as they are raised, so that a chunk raised from a
    synchronous event listener goes out after everything sent before it and before any
    answer sent after it (a prompt's answer follows its chunks, a load's answer its
    history). An update raised on another thread hops to the loop's thread first.

    `later` queues after the answer now being sent (a session's first updates must follow
    the `session/new` answer that names it)."""

    def __init__(self, transport: Poster) -> None:
        self._transport = transport
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Called on the loop's own thread: updates raised on another thread hop to it."""
        self._loop, self._thread = loop, threading.get_ident()

    def update(self, session_id: str, update: BaseModel) -> None:
        body = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.raw(session_id, body)

    def raw(self, session_id: str, update: dict[str, Any]) -> None:
        message = {
            "jsonrpc": "2.0",
            "method": UPDATE,
            "params": {"sessionId": session_id, "update": update},
        }
        loop = self._loop
        if loop is not None and threading.get_ident() != self._thread:
            loop.call_soon_threadsafe(self._transport.post, message)  # off the loop's thread
        else:
            self._transport.post(message)

    def later(self, session_id: str, update: BaseModel) -> None:
        loop = self._loop or asyncio.get_running_loop()
        loop.call_soon(self.update, session_id, update)

    async def drain(self) -> None:
        """Returns once every update raised so far is written to the pipe."""
        await self._transport.drain()
