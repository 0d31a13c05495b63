"""Sessions held read-only here because another process writes them, watched for that
process to let go: the kernel's table of locks read every `EVERY` seconds in a worker
thread while there is one (no lock taken, no timer while there is none), and a session
whose writer let go looked at as a `get` would, which makes this process its writer."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING

from baton.core.background import Background
from baton.core.conversation.writer_lock import PROC_LOCKS, write_locked
from baton.core.errors import BatonError
from baton.core.service.lanes import in_thread
from baton.core.service.runtime import Runtimes

if TYPE_CHECKING:
    from baton.core.service.service import BatonService

log = logging.getLogger(__name__)

EVERY = 1.5  # seconds between two reads of the table of locks


class WriterWatch:
    def __init__(
        self,
        service: BatonService,
        runtimes: Runtimes,
        background: Background,
    ) -> None:
        self._service = service
        self._runtimes = runtimes
        self._background = background
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    def watch(self) -> None:
        """After a look: the watch starts when a session open here is another process's
        to write and none runs (Linux only: elsewhere each look reads the session again)."""
        if self._stopped or (self._task is not None and not self._task.done()):
            return
        if not self._held() or not PROC_LOCKS.exists():
            return
        self._task = self._background.spawn(self._run(), "the watch of other writers' locks")

    @property
    def watching(self) -> bool:
        return self._task is not None and not self._task.done()

    def stop(self) -> None:
        """The server ends: no session is looked at (nor opened for writing) any more."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()

    def _held(self) -> list[str]:
        """The sessions open here read-only because another process holds the lock."""
        return [
            runtime.session_id
            for runtime in self._runtimes
            if runtime.session.transcript.other_writer() is not None
        ]

    async def _run(self) -> None:
        while not self._stopped:
            await asyncio.sleep(EVERY)
            if not self._held():
                return  # none left: no timer until the next one
            locked = await in_thread(write_locked)
            for session_id in self._held():
                if self._stopped:
                    return
                runtime = self._runtimes.get(session_id)
                held = runtime.session.transcript.other_writer() if runtime else None
                if held is None or held in locked:
                    continue
                try:
                    await self._writer_let_go(session_id)
                except BatonError as exc:  # gone, or its folder unreadable: the next look says
                    log.debug("session %s, its writer gone, not looked at: %s", session_id, exc)

    async def _writer_let_go(self, session_id: str) -> None:
        """The process that wrote a session held read-only here let go of it: a look, as a
        `get`'s (off the event loop), makes this process its writer, told as `reload`
        (`Changes.looked`: it is writable now). Another process that took the lock first
        leaves it read-only: told only if the file changed."""
        service = self._service
        await service.in_lane(session_id, partial(service.session, session_id))
        service.changes.looked(self._runtimes.get(session_id))
