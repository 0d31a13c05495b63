"""Freed heap memory handed back to the system after a burst of work (glibc's malloc_trim).

A list of 10,000 sessions or a compaction of a million tokens builds tens of MB of
short-lived objects (the summaries, the wire models, the answer's JSON). Python frees
them, but the C heap keeps the pages, so the process's resident memory stays at its peak
for as long as it runs. `malloc_trim(0)` gives the free pages back (about 0.1 ms on a
100 MB heap). Where the C library has no such call (musl, macOS, Windows) nothing is done.

Also here: the cyclic collector paused while a big piece of work builds what it keeps
(`collector_paused`), which loads and imports may do in overlapping threads, and what such
work built let go of a step at a time when it is not kept after all (`let_go_of`).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

# On the loop's next turn: a request's answer is written by a callback its task's end
# schedules, which runs before a timer due then (so the answer's JSON is freed first);
# requests that end together share one release. A release costs ~0.1 ms, ~3 us when
# nothing was freed, but ~0.4 ms on a heap an import grew, after every request of a
# client that asks without pause: a third of the loop's time went to releases.
SETTLE_SECONDS = 0.0
RELEASE_SHARE = 0.05  # of the loop's time at most: after a release, the next waits 20x its cost


def _find_trim() -> Callable[[int], int] | None:
    try:
        name = ctypes.util.find_library("c")
        trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


_trim = _find_trim()


def release_freed_memory() -> bool:
    """Give the C heap's free pages back to the system; False where that cannot be done."""
    if _trim is None:
        return False
    _trim(0)
    return True


class ReleaseAfterWork:
    """`worked()` as each request ends: once requests stop for `settle` seconds (by
    default the loop's next turn, after the answer is written), the freed memory goes back
    (one release for requests that end together), but no sooner after the last release
    than its cost allows (`RELEASE_SHARE`): requests that come without pause get a
    release now and then, not one after each."""

    def __init__(self, settle: float = SETTLE_SECONDS, share: float = RELEASE_SHARE) -> None:
        self._settle = settle
        self._share = share
        self._timer: asyncio.TimerHandle | None = None
        self._next_at = 0.0  # the loop's time before which no release runs
        self.releases = 0  # how many ran (tests, logs)

    def worked(self) -> None:
        if _trim is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): nothing to schedule on
            return
        if self._timer is not None:
            self._timer.cancel()
        due = max(loop.time() + self._settle, self._next_at)
        self._timer = loop.call_at(due, self._release, loop)

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        start = time.perf_counter()
        if release_freed_memory():
            self.releases += 1
            self._next_at = loop.time() + (time.perf_counter() - start) / self._share


class CollectorPause:
    """The cyclic collector kept out of work that allocates much of what it keeps (a
    session's load, an import): each of its collections would walk the growing heap
    again, holding the GIL for tens of milliseconds, and every other session with it.
    Such work may overlap (a load on the loop, an import in a thread): the first to
    enter switches the collector off and the last to leave switches it back on, when it
    was on, so an inner one that found it off never leaves it off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._was_enabled:
                    gc.enable()


collector_paused = CollectorPause()


def freeze_made() -> None:
    """What a long piece of work made, with the collector out, frozen out of its later
    walks (refcounting still frees what is dropped): called before the collector is back on,
    else the first allocation after runs a full collection over all of it."""
    gc.freeze()


@contextmanager
def loading() -> Iterator[None]:
    """A load allocates most of what a session will hold. The cyclic collector stays out of
    it (it would walk the growing heap again and again), and afterwards everything alive is
    frozen out of later collections' walks, so a full collection in an append does not walk
    a million-token session (refcounting still frees what is dropped). Frozen before the
    collector is back on: else the first allocation after would run a full collection over
    all that was just loaded (0.13 s for a 57,000-message import, holding every session)."""
    with collector_paused():
        try:
            yield
        finally:
            freeze_made()


STEP = 1_000  # a list's items freed at once: ~2 ms of the events an import wrote


def _alone() -> int:
    """What `sys.getrefcount` says of a value popped from a dict into a local that nothing
    else holds, as `let_go_of` asks it (2 up to Python 3.13; an interpreter that borrows the
    references it loads may say less): more than that, another holds it too."""
    held = {"probe": object()}
    _, value = held.popitem()
    return sys.getrefcount(value)


ALONE = _alone()


def let_go_of(*holders: object) -> None:
    """What `holders` hold, freed a step at a time in the calling thread: their attributes
    let go of one by one, a list, a dict or a set that only its holder held emptied a step
    at a time (`STEP` items of a list, one of the others), an object that only its holder
    held let go of in the same way. Between two steps the interpreter may pass to another
    thread (the event loop's, answering requests), where what a big piece of work built,
    freed in one go, holds it throughout: the events written from 100 MB of a file an
    import read, 0.16 s. What another holds too is only let go of; the holders are left
    without their attributes, of no further use."""
    pending = list(holders)
    while pending:
        held = _own_attributes(pending.pop())
        while held:
            _, value = held.popitem()
            if sys.getrefcount(value) > ALONE:  # held elsewhere too
                continue
            if isinstance(value, list):
                while value:
                    del value[-STEP:]
            elif isinstance(value, dict):
                while value:
                    value.popitem()
            elif isinstance(value, set):
                while value:
                    value.pop()
            else:
                pending.append(value)


def _own_attributes(thing: object) -> dict[str, Any] | None:
    """The dict of `thing`'s attributes when it is its own (a class's, a module's or a
    bound method's is not: it belongs to another, shared)."""
    if isinstance(thing, (type, types.ModuleType, types.MethodType)):
        return None
    held = getattr(thing, "__dict__", None)
    return held if type(held) is dict else None
