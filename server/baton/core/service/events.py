"""What the service tells its front ends: one event per change, carrying what changed and
the usage computed once, and the text of a reply as it streams.

A front end connects once (`BatonService.connect`) with a listener and, if it can show
progress, a progress scope; it publishes from the events alone and never calls back into
the service for the change an event describes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal

from baton.core.compaction.automatic.outcome import AutoOutcome
from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.meta_records import PausedBy
from baton.core.conversation.session import Session
from baton.core.service.results import RenderData
from baton.core.usage.budget import Usage

log = logging.getLogger(__name__)

# what changed: the wire's `baton/sessionChanged` reasons, or None when only the usage
# moved (settings, model limits, an exact count, auto-compact paused)
Reason = Literal[
    "create",
    "append",
    "reply",
    "compact",
    "uncompact",
    "pin",
    "model",
    "rewind",
    "rename",
    "reload",
    "systemPrompt",
]
ProgressScope = Callable[[str], AbstractAsyncContextManager[Progress]]


@dataclass(frozen=True)
class SessionChanged:
    """One change of one session (a deletion is `SessionClosed`): the session, the usage
    after the change, whether a reply streams in it, and why auto-compact is paused."""

    session_id: str
    reason: Reason | None
    session: Session
    usage: Usage
    replying: bool = False
    paused_by: PausedBy | None = None
    tell_usage: bool = True  # False when the usage cannot have moved (a pin)

    def document(self) -> RenderData:
        """What the session's document shows after the change."""
        session = self.session
        last = session.active[-1] if session.active else None
        return RenderData(session, session.view_messages(), self.usage, last, self.paused_by)


@dataclass(frozen=True)
class ReplyText:
    """Text of a reply as it streams."""

    session_id: str
    message_id: str
    text: str


@dataclass(frozen=True)
class SessionOpened:
    """The service opened the session (its runtime was made)."""

    session_id: str


@dataclass(frozen=True)
class SessionClosed:
    """The session's runtime was dropped: it was deleted (the wire's `delete` change; also
    when a look finds it deleted elsewhere or its file gone), or the store closed (another
    data directory)."""

    session_id: str
    deleted: bool = False


@dataclass(frozen=True)
class AutoCompactStarted:
    """An auto-compaction starts its work (before a send, in the background after a
    change, or while idle: `reason`); its `AutoCompacted` follows when it ends, whatever
    the end. An attempt that ends before any work (the thrash guard) has no start."""

    session_id: str
    reason: str
    boundary_id: str = ""  # the id its boundary takes if it commits


@dataclass(frozen=True)
class AutoCompacted:
    """What one auto-compaction attempt did, in a sentence the panel shows."""

    session_id: str
    outcome: AutoOutcome


@dataclass(frozen=True)
class DataDirChanged:
    """The data dir changed while the server runs (`DataDirWatch`): `lines` say so, one
    sentence each naming the path and the cause (a problem in the start's words), `back`
    when Baton can use it again; `before` and `problems` are what the data dir did not
    allow at the last look and now (`access_problems`)."""

    lines: tuple[str, ...]
    before: tuple[str, ...]
    problems: tuple[str, ...]
    back: bool


Event = (
    SessionChanged
    | ReplyText
    | SessionOpened
    | SessionClosed
    | AutoCompactStarted
    | AutoCompacted
    | DataDirChanged
)
Listener = Callable[[Event], None]


class Events:
    """The connected front ends: each event goes to every listener, in connection order;
    a listener that fails is logged and the others still hear the event."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self.progress: ProgressScope | None = None

    def connect(self, listener: Listener, progress: ProgressScope | None = None) -> None:
        self._listeners.append(listener)
        if progress is not None:
            self.progress = progress

    def emit(self, event: Event) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                log.exception("a listener failed on %s", type(event).__name__)
