"""What the service's calls hand back: an append's ids and repairs, an import's notes, a
reply, and what a session document shows, each with the usage that followed."""

from __future__ import annotations

from dataclasses import dataclass

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.usage.budget import Usage


@dataclass
class Appended:
    message_ids: list[str]
    repairs: list[str]
    usage: Usage


@dataclass
class Imported:
    session: Session
    notes: list[str]  # what the import skipped, repaired or joined, one line each


@dataclass
class Reply:
    message: Message
    usage: Usage
    set_aside: Boundary | None = None  # the rewind of a refused, or a retried, reply


@dataclass
class RenderData:
    """Everything a session document shows, read at one moment."""

    session: Session
    messages: list[Message]
    usage: Usage
    last_boundary_id: str | None
    auto_paused_by: str | None = None  # "failures" or "thrashing" while auto-compact is paused
