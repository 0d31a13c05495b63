"""One session's state of its notes updates (whether one runs), apart from the updater so
that holding it loads neither the updater nor the model client."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False)
class NotesState:
    """Kept in the session's runtime by the service; an updater used alone keeps its own."""

    running: bool = False
