"""Idle compaction (opt-in, `idleCompact`): once a session has been idle past the prompt
cache's lifetime, the next request pays for its whole prefix anyway, so a session above a
share of its window is compacted in the background then: never while a reply streams, a
compaction runs or the user has a draft open; undone as any compaction.

The cache lifetime is 5 minutes, or 1 hour when the latest request marked a block with
`cache_control: {"ttl": "1h"}`. Each append or reply starts the wait again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from baton.core.conversation.messages import Message
from baton.core.settings import Settings
from baton.core.usage.budget import Usage

log = logging.getLogger(__name__)

SHORT_CACHE_SECONDS = 5 * 60
LONG_CACHE_SECONDS = 60 * 60
SLACK_SECONDS = 5  # past the lifetime, so the cache has surely expired
RECENT_MESSAGES = 8  # the messages searched for a long cache marker, from the end
ACTIVE = ("append", "reply")
# Background.debounce: run the coroutine made by the callable `delay` s after the last call
Debounce = Callable[[str, float, Callable[[], Coroutine[Any, Any, Any]], str], None]


def _long_marker(block: Any) -> bool:
    extra = getattr(block, "model_extra", None) or {}
    marker = extra.get("cache_control")
    return isinstance(marker, dict) and marker.get("ttl") == "1h"


def cache_lifetime(view: Sequence[Message], short: float, long: float) -> float:
    """The prompt cache's lifetime for the latest request: `long` when one of the view's
    last messages asked for the 1-hour cache, else `short`."""
    for message in view[-RECENT_MESSAGES:]:
        if any(_long_marker(block) for block in message.content):
            return long
    return short


def why_not(
    usage: Usage,
    settings: Settings,
    *,
    replying: bool,
    compacting: bool,
    draft_open: bool,
    read_only: bool,
    paused: bool,
) -> str | None:
    """Why an idle session is not compacted now, or None when it is to be. An idle
    compaction is an auto-compaction: it waits, as auto-compact does, while auto-compact is
    paused (after repeated failures, or thrashing) until a manual compaction."""
    idle = settings.idle_compact
    if not idle.enabled:
        return "idle compaction is off"
    if replying or compacting or draft_open or read_only:
        return "a reply, a compaction or a draft is open"
    if paused:
        return "auto-compact is paused until a manual compaction"
    if usage.used_tokens < usage.context_window * idle.percent / 100:
        return f"below {idle.percent:g}% of the window"
    return None


class IdleCompaction:
    """The idle timers of the sessions (one per session, started again by each change) and
    the drafts open in them. `due(session_id)` is called when one runs out; it checks
    `why_not` again and compacts."""

    def __init__(
        self,
        debounce: Debounce,
        due: Callable[[str], Coroutine[Any, Any, None]],
        *,
        short: float = SHORT_CACHE_SECONDS,
        long: float = LONG_CACHE_SECONDS,
        slack: float = SLACK_SECONDS,
    ) -> None:
        self._debounce = debounce
        self._due = due
        self.short, self.long, self.slack = short, long, slack
        self._drafts: set[str] = set()

    @staticmethod
    def key(session_id: str) -> str:
        return f"idle-compact:{session_id}"

    def active(self, session_id: str, view: Sequence[Message], settings: Settings) -> None:
        """The session was used (an append, a reply): its wait starts again."""
        self._drafts.discard(session_id)  # a send took the draft
        if not settings.idle_compact.enabled:
            return
        delay = cache_lifetime(view, self.short, self.long) + self.slack
        self._debounce(
            self.key(session_id), delay, lambda: self._due(session_id), "idle compaction"
        )

    def draft(self, session_id: str, open_: bool) -> None:
        """The user's draft in the session: open (text or attachments) or not."""
        if open_:
            self._drafts.add(session_id)
        else:
            self._drafts.discard(session_id)

    def draft_open(self, session_id: str) -> bool:
        return session_id in self._drafts

    def closed(self, session_id: str) -> None:
        self._drafts.discard(session_id)
