"""Background tasks: one owner that keeps their references and logs their failures."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """Tasks the server starts and nobody awaits (auto-compact after an append, model
    limits, session notes). A task that fails is logged, never lost silently."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

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

    def __len__(self) -> int:
        return len(self._tasks)

    async def close(self) -> None:
        """Cancel what still runs and wait for it to stop."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
