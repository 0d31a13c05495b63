"""What a client sees of a turn while it runs: each visible step (the prompt appended, an
auto-compaction committed, the reply recorded) becomes one change event, as it happens."""

from __future__ import annotations

from collections.abc import Callable

from baton.core.conversation.session import Session

Mark = tuple[tuple[str, ...], tuple[str, ...]]


class TurnWatch:
    """Compares the session with what the client last saw and reports the difference as
    `changed(reason)`: "compact" when the compactions differ ("rewind" when what came is a
    rewind: a broken reply set aside to be made again), else "reply" or "append" by who
    spoke last. `catch_up` with nothing new reports nothing."""

    def __init__(self, session: Session, changed: Callable[[str], object]) -> None:
        self._session = session
        self._changed = changed
        self._seen = mark(session)

    def catch_up(self) -> None:
        now = mark(self._session)
        if now[0] != self._seen[0]:
            came = [b for b in now[0] if b not in self._seen[0]]
            rewinds = all(self._session.boundaries[b].direction == "rewind" for b in came)
            self._changed("rewind" if came and rewinds else "compact")
        elif now != self._seen:
            view = self._session.view_messages()
            last_role = view[-1].role if view else "user"
            self._changed("reply" if last_role == "assistant" else "append")
        self._seen = now


def mark(session: Session) -> Mark:
    """What a client can see of a session: its compactions and its view."""
    return tuple(session.active), tuple(session.view)
