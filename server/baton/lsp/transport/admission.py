"""Who gets the one client slot of a network server: connections wait, bounded, for the token.

A connection is only a candidate until it shows the token: it holds no slot, it has
`BATON_TOKEN_TIMEOUT` seconds (default 5) from its accept to show it, and at most
`MAX_WAITING` connections wait at once (a new one closes the one that has waited
longest). The first connection that shows the token takes the slot; every other waiting
connection is closed then, and later ones are turned away. So a connection that never
speaks, or a flood of half-open WebSocket handshakes, holds a few descriptors for a few
seconds and never keeps the editor out. What is closed (and what is turned away while a
client is served) is said on stderr once, then as counts at most every `QUIET_SECONDS`, and
what is counted is said as the server ends at the latest.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from baton.core import environment

log = logging.getLogger(__name__)

TIMEOUT_ENV = "BATON_TOKEN_TIMEOUT"
DEFAULT_TIMEOUT = 5.0  # seconds from accept to the token
MAX_TIMEOUT = 600.0
MAX_WAITING = 32  # connections waiting for the token at once
QUIET_SECONDS = 10.0  # between two lines about closed waiting connections


def token_timeout() -> float:
    """`BATON_TOKEN_TIMEOUT` in seconds, in (0, 600]."""
    return environment.seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, MAX_TIMEOUT)


class Waiting:
    """One connection that has not shown the token yet."""

    def __init__(self, admission: Admission, close: Callable[[], None], peer: Any) -> None:
        self.admission = admission
        self.close = close
        self.peer = peer
        self.timer: asyncio.TimerHandle | None = None


class Admission:
    """The one client slot and the connections waiting for it."""

    def __init__(self, timeout: float | None = None, limit: int = MAX_WAITING) -> None:
        self.timeout = token_timeout() if timeout is None else timeout
        self.limit = limit
        self.served = False  # a client showed the token and holds the slot
        self._waiting: dict[int, Waiting] = {}  # in arrival order
        self._unsaid: dict[tuple[str, str], int] = {}  # what happened -> how often
        self._said_at = -math.inf
        self._flush: asyncio.TimerHandle | None = None

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def arrive(self, close: Callable[[], None], peer: Any) -> Waiting:
        """A new connection: it waits for the token; `close` ends it (at once, no answer)."""
        while len(self._waiting) >= self.limit:
            oldest = next(iter(self._waiting.values()))
            self._drop(oldest, f"more than {self.limit} connections waited for the token")
        waiting = Waiting(self, close, peer)
        self._waiting[id(waiting)] = waiting
        loop = asyncio.get_running_loop()
        waiting.timer = loop.call_later(self.timeout, self._expire, waiting)
        return waiting

    def admit(self, waiting: Waiting) -> bool:
        """The connection showed the token: it takes the slot (False when it is taken)."""
        self.leave(waiting)
        if self.served:
            return False
        self.served = True
        for other in list(self._waiting.values()):
            self._drop(other, "a client showed the token and is served")
        return True

    def leave(self, waiting: Waiting) -> None:
        """The connection ended (or was admitted): it waits no longer."""
        if self._waiting.pop(id(waiting), None) is not None and waiting.timer is not None:
            waiting.timer.cancel()

    def _expire(self, waiting: Waiting) -> None:
        if id(waiting) in self._waiting:
            self._drop(waiting, f"no token within {self.timeout:g} s")

    def _drop(self, waiting: Waiting, reason: str) -> None:
        self.leave(waiting)
        try:
            waiting.close()
        except Exception:  # a transport already gone: nothing left to close
            log.debug("closing a waiting connection failed", exc_info=True)
        self.note(
            "closed a connection that had not shown the token",
            "closed {} more connections that had not shown the token",
            reason,
        )

    def refused(self, reason: str) -> None:
        """A connection refused for what it sent before the token (said like a close)."""
        self.note("refused a network client", "refused {} more network clients", reason)

    def note(self, once: str, more: str, reason: str) -> None:
        """Say `once: reason` on stderr, unless something was said less than QUIET_SECONDS
        ago: then it is counted, and `more` (with the count) said when that time is up."""
        now = time.monotonic()
        if now - self._said_at >= QUIET_SECONDS:
            self._said_at = now
            log.warning("%s: %s", once, reason)
            return
        key = (more, reason)
        self._unsaid[key] = self._unsaid.get(key, 0) + 1
        if self._flush is None:
            later = QUIET_SECONDS - (now - self._said_at)
            self._flush = asyncio.get_running_loop().call_later(later, self.say_counts)

    def say_counts(self) -> None:
        """Say what was counted and not said yet: when its time is up, or as the server
        ends (a count is never lost)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self._said_at = time.monotonic()
        for (more, reason), count in self._unsaid.items():
            log.warning("%s: %s", more.format(count), reason)
        self._unsaid.clear()
