"""Background tasks: one owner that keeps their references and logs their failures."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import sys
import threading
import traceback
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


SWITCH_S = 0.001  # how long a thread holds the interpreter before another may take it


def answer_promptly() -> None:
    """Let the event loop's thread take the interpreter from a worker thread within 1 ms
    rather than Python's 5: every request the loop answers while an import, a render or a
    compaction runs in a thread waits that long at each of its reads and writes (measured
    beside the import of a 250 MB file: another session's get 182-214 ms at the 95th
    percentile, 58-80 ms so; the import's time no different within the noise). Set once by
    each serving process (`lsp.server.serve`, `acp.server.run`)."""
    sys.setswitchinterval(SWITCH_S)


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


def daemon(work: Callable[[], T], name: str) -> asyncio.Future[T]:
    """`work()` in a daemon thread of its own, its outcome the future's. The process's end
    waits for the threads of `asyncio.to_thread` (the loop's executor joins them), not for
    this one: only for work that writes nothing (a compaction's summary, a render, a page,
    an undo's check, a count, a tool's walk), which an `exit` drops."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()  # as asyncio.to_thread carries it
    # the future handed over in a list the thread empties: nothing it runs keeps it after
    thread = threading.Thread(
        target=context.run, args=(_run, work, [future], loop), name=name, daemon=True
    )
    thread.start()
    return future


def _run(
    work: Callable[[], T], waiting: list[asyncio.Future[T]], loop: asyncio.AbstractEventLoop
) -> None:
    """`work()`, its outcome told to the future `waiting` holds, on `loop`. A failure's
    traceback leads back here (each of its frames to the one that called it): once the
    outcome is handed over this frame holds neither the future nor the failure, which
    would else keep each other, and all that the failure's frames held, until a full
    collection."""
    future = waiting.pop()
    try:
        result = work()
    except asyncio.CancelledError:  # its loop's task, cancelled from here
        told: Callable[[], object] = future.cancel
    except BaseException as error:  # handed to the one who waits for it
        told = partial(future.set_exception, _let_go(error))
    else:
        told = partial(future.set_result, result)
        del result
    with contextlib.suppress(RuntimeError):  # the loop has closed
        loop.call_soon_threadsafe(_settle, future, told)
    del future, told


def _settle(future: asyncio.Future[Any], outcome: Callable[[], object]) -> None:
    if not future.done():  # cancelled meanwhile: nobody waits for it
        outcome()


def _let_go(error: BaseException) -> BaseException:
    """`error` without what its frames held, let go of here, in the work's thread: its
    traceback still says where it was raised, but the frames it ran through (ended) keep
    none of their locals (a failed import's converter, its staged file)."""
    traceback.clear_frames(error.__traceback__)
    return error
