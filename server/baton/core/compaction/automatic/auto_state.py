"""One session's auto-compact state: the circuit breaker, the thrash guard, its lock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from baton.core.conversation.meta_records import AutoPause
from baton.core.usage.usage_memo import UsageMemo


@dataclass(eq=False)
class AutoState:
    """One session's auto-compact state: the breaker, the thrash guard, the lock that lets
    one auto-compaction run at a time, and the task running it. The service keeps it in the
    session's runtime (core/service/runtime.py), so it goes when the session goes."""

    failures: int = 0
    last_error: str | None = None
    refills: int = 0
    thrashing: bool = False
    # the last auto-compaction that got under the threshold: its boundary and how long the
    # view was right after it (the turns after that are the refill)
    last_auto: tuple[str, int] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    holder: asyncio.Task[Any] | None = None

    def paused_before(self, pause: AutoPause, max_failures: int) -> None:
        """Stopped as the transcript recorded it before a restart, until a manual
        compaction (`reset`)."""
        if pause.by == "thrashing":
            self.thrashing = True
        else:
            self.failures = max(self.failures, max_failures)
        self.last_error = pause.reason or None

    def reset(self) -> None:
        """Close the breaker and the thrash guard (the lock and its holder stay as they are)."""
        self.failures, self.last_error, self.refills = 0, None, 0
        self.thrashing, self.last_auto = False, None


StateOf = Callable[[str], AutoState]
MemoOf = Callable[[str], UsageMemo | None]
