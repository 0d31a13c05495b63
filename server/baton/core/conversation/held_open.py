"""How many sessions the store holds open at once, and when `get` reads a held one again."""

from __future__ import annotations

import resource
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.core.conversation.session import Session

MAX_OPEN = 64  # sessions held open (a descriptor and a lock each); the least recently used go


def open_bound() -> int:
    """How many sessions to hold open: `MAX_OPEN`, or a quarter of the descriptors the
    process may open when that is fewer (`ulimit -n`), so the sessions never use up what
    the server needs besides (its pipes and sockets, the files a list or a tool reads)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return MAX_OPEN if soft == resource.RLIM_INFINITY else max(1, min(MAX_OPEN, soft // 4))


def read_again(session: Session) -> bool:
    """Whether `get` reads the session again: a view of a file another process writes once
    that process wrote it or let go (so it shows that process's latest turns, and becomes
    writable), one Baton may not write each time; a damaged one that is never written (its
    header lost, or naming another session) only when its file changed since it was read."""
    if session.transcript.read_only:
        return not session.transcript.unchanged_view()
    return session.read_only and session.transcript.moved_on()
