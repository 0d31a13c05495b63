"""Freed heap memory handed back to the system after a burst of work (glibc's malloc_trim).

A list of 10,000 sessions or a compaction of a million tokens builds tens of MB of
short-lived objects (the summaries, the wire models, the answer's JSON). Python frees
them, but the C heap keeps the pages, so the process's resident memory stays at its peak
for as long as it runs. `malloc_trim(0)` gives the free pages back (about 0.1 ms on a
100 MB heap). Where the C library has no such call (musl, macOS, Windows) nothing is done.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

# On the loop's next turn: a request's answer is written by a callback its task's end
# schedules, which runs before a timer due then (so the answer's JSON is freed first);
# requests that end together share one release. A release costs ~0.1 ms, ~3 us when
# nothing was freed.
SETTLE_SECONDS = 0.0


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
    (one release for requests that end together)."""

    def __init__(self, settle: float = SETTLE_SECONDS) -> None:
        self._settle = settle
        self._timer: asyncio.TimerHandle | None = None
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
        self._timer = loop.call_later(self._settle, self._release)

    def _release(self) -> None:
        self._timer = None
        if release_freed_memory():
            self.releases += 1
