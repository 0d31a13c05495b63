"""The data dir looked at again while the server runs: its sessions folder made a link,
made read-only or unreadable, moved away or removed since the client was last told (by
the start, or by an earlier look) is told once as a `DataDirChanged`, in the start's
words, and again once Baton can use it again; a look that finds nothing new says nothing.

A look is a few stats (the folder's `access_problems` and whether it is there), made on
the event loop as a list, a create or a `get` is about to touch the folder."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from baton.core.conversation.store import SessionStore
from baton.core.service.events import DataDirChanged, Events

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _State:
    """What one look found: the data dir, what it does not allow (`access_problems`), and
    whether its sessions folder is there (a folder, or anything in its place)."""

    data_dir: Path
    problems: tuple[str, ...]
    present: bool


class DataDirWatch:
    """What the client was last told of the data dir, and each change since, told once."""

    def __init__(self, store: Callable[[], SessionStore], events: Events) -> None:
        self._store = store
        self._events = events
        self._last: _State | None = None  # None: not looked at yet
        self._gone_told = False  # its sessions folder was told gone, and is not back yet

    def told(self) -> list[str]:
        """What the start (or a change of settings) says of the data dir: its problems,
        from now on what a look compares with. What changed since the last look (the same
        data dir) is told first, as a look tells it: the settings' warning says only what
        is wrong, never that it is right again."""
        self.look()
        now = self._state()
        if self._last is not None and self._last.data_dir != now.data_dir:
            self._gone_told = False  # another data dir: the old one's folder is no news
        self._last = now
        return list(now.problems)

    def look(self) -> None:
        """Tell what changed since the last look or start, once (`DataDirChanged`)."""
        now = self._state()
        last, self._last = self._last, now
        if last is None or last == now or last.data_dir != now.data_dir:
            return
        folder = self._store().sessions_dir
        if now.problems:
            if now.problems == last.problems:
                return
            lines, back = now.problems, False
        elif last.problems:
            again = f"data dir {now.data_dir}: Baton can read and write {folder} again"
            lines, back = (again,), True
            self._gone_told = False
        elif last.present and not now.present:
            self._gone_told = True
            gone = (
                f"data dir {now.data_dir}: {folder} is gone (moved or removed while Baton "
                "ran); the sessions kept there are no longer listed, and a new session "
                "makes the folder again"
            )
            lines, back = (gone,), False
        elif now.present and self._gone_told:
            self._gone_told = False
            lines, back = (f"data dir {now.data_dir}: {folder} is back",), True
        else:
            return
        for line in lines:  # its end at the problem's level: seen where the problem was
            log.warning("%s", line)
        self._events.emit(DataDirChanged(lines, last.problems, now.problems, back))

    def settle(self) -> None:
        """This server made the sessions folder (a create): that is no news to tell."""
        self._last = self._state()
        if self._last.present:
            self._gone_told = False

    def _state(self) -> _State:
        store = self._store()
        folder = store.sessions_dir
        problems = tuple(store.access_problems())
        return _State(store.data_dir, problems, os.path.lexists(folder))
