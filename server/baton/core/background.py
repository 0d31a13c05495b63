"""Background tasks: one owner that keeps their references and logs their failures."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """Tasks the server starts and nobody awaits (auto-compact after an append, model
    limits, session notes, exact counts). A task that fails is logged, never lost
    silently."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any] | None:
        try:
            task = asyncio.get_running_loop().create_task(work)
        except RuntimeError:  # no running loop (a synchronous caller): nothing to run it on
            work.close()
            return None
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and (error := finished.exception()) is not None:
                log.error("%s failed: %s: %s", what, type(error).__name__, error)

        task.add_done_callback(done)
        return task

    def debounce(
        self,
        key: str,
        delay: float,
        make: Callable[[], Coroutine[Any, Any, Any]],
        what: str,
    ) -> None:
        """Run `make()` as a task `delay` seconds after the last call with this `key`: a
        burst of calls makes one run, with the state the burst left behind."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no running loop: nothing to run it on
            return
        pending = self._timers.pop(key, None)
        if pending is not None:
            pending.cancel()
        self._timers[key] = loop.call_later(delay, self._fire, key, make, what)

    def _fire(self, key: str, make: Callable[[], Coroutine[Any, Any, Any]], what: str) -> None:
        self._timers.pop(key, None)
        self.spawn(make(), what)

    def pending(self, key: str) -> bool:
        """True while a debounced run for `key` waits for its delay."""
        return key in self._timers

    def __len__(self) -> int:
        return len(self._tasks)

    async def close(self) -> None:
        """Cancel what still runs (and what waits to run) and wait for it to stop."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
