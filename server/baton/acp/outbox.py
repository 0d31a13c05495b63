"""Every `session/update` the agent sends, in the order it was raised: typed updates from the
SDK's schema and raw ones the SDK does not know yet (the compaction updates)."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Protocol

from pydantic import BaseModel

log = logging.getLogger(__name__)

UPDATE = "session/update"


class Sender(Protocol):
    """What the outbox needs of the connection: a raw JSON-RPC notification."""

    async def send_notification(self, method: str, params: Any = None) -> None: ...


class Outbox:
    """A queue of notifications and the one task that writes them, so that a chunk raised
    from a synchronous event listener goes out after every chunk raised before it.

    `drain` waits until everything queued so far is written (a prompt's answer must follow
    its chunks); `later` queues after the answer now being sent (a session's first updates
    must follow the `session/new` answer that names it)."""

    def __init__(self, sender: Sender) -> None:
        self._sender = sender
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._pump: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Future[None]] = set()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Called on the loop's own thread: updates raised on another thread hop to it."""
        self._loop, self._thread = loop, threading.get_ident()

    def update(self, session_id: str, update: BaseModel) -> None:
        body = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.raw(session_id, body)

    def raw(self, session_id: str, update: dict[str, Any]) -> None:
        params = {"sessionId": session_id, "update": update}
        loop = self._loop
        if loop is not None and threading.get_ident() != self._thread:
            loop.call_soon_threadsafe(self._put, params)  # raised off the loop's thread
        else:
            self._put(params)

    def later(self, session_id: str, update: BaseModel) -> None:
        loop = self._loop or asyncio.get_running_loop()
        loop.call_soon(self.update, session_id, update)

    async def drain(self) -> None:
        await self._queue.join()

    def _put(self, params: dict[str, Any]) -> None:
        self._queue.put_nowait(params)
        if self._pump is None or self._pump.done():
            self._pump = asyncio.get_running_loop().create_task(self._run(), name="acp-outbox")

    async def _run(self) -> None:
        """Hand each notification to the connection's writer in order, without waiting for
        the pipe: the writer keeps the order it was handed them in."""
        while True:
            params = await self._queue.get()
            sent = asyncio.ensure_future(self._sender.send_notification(UPDATE, params))
            self._sending.add(sent)
            sent.add_done_callback(self._sent)  # tasks start in the order they were made

    def _sent(self, sent: asyncio.Future[None]) -> None:
        self._sending.discard(sent)
        self._queue.task_done()
        if not sent.cancelled() and sent.exception() is not None:  # the client went away
            log.debug("session/update not sent: %s", type(sent.exception()).__name__)

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
