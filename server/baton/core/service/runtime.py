"""Each session's runtime state, and the one table that creates and drops it.

Everything the server keeps about a session besides its transcript lives in its
`SessionRuntime`: the tools of its last send, auto-compact's breaker and lock, the summary
written ahead, the exact count, the notes update, the usage memo and the figure last told,
whether a reply streams.
A runtime is created when the service first opens the session and dropped when the session
is deleted or the store closes; dropping it cancels what it still has scheduled and drops
the estimator's counts of its messages, so nothing of the session remains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from baton.core.compaction.automatic.ahead import AheadState
from baton.core.compaction.automatic.auto import MAX_FAILURES
from baton.core.compaction.automatic.auto_state import AutoState
from baton.core.compaction.summary.notes_state import NotesState
from baton.core.conversation.meta_records import PausedBy
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import SessionNotFound
from baton.core.model_api.exact_counts import ExactState
from baton.core.service.events import Events, SessionClosed, SessionOpened
from baton.core.turn.watch import Mark, mark
from baton.core.usage.estimator import Estimator
from baton.core.usage.usage_memo import UsageMemo


@dataclass(eq=False)
class SessionRuntime:
    """One open session and what the server keeps about it while it is open."""

    session: Session
    tools: list[dict[str, Any]] | None = None  # from its last send
    tools_tokens: int = 0
    tools_allowed: set[str] = field(default_factory=set)  # tool kinds allowed for the session
    replying: bool = False  # a reply streams (the document publishes less often)
    auto: AutoState = field(default_factory=AutoState)
    ahead: AheadState = field(default_factory=AheadState)
    exact: ExactState = field(default_factory=ExactState)
    notes: NotesState = field(default_factory=NotesState)
    usage: UsageMemo = field(default_factory=UsageMemo)
    told: int | None = None  # the used tokens its last usage event told (None: none yet)
    # what the client was last told: the view and compactions of the last change announced,
    # and why auto-compact was paused then (`Changes.caught_up` tells only what is new)
    shown: tuple[Mark, PausedBy | None] | None = None
    # the view and compactions before the session was read again from its file (another
    # process writes it), until a look tells the change (`Changes.looked`)
    reread_from: Mark | None = None
    # whether it was read-only then (read again once the writer let go, it is writable)
    reread_read_only = False
    # the watch told that its writer let go (`reload`), told once: the look that makes it
    # the writer tells that no more (`Changes.looked`), nor the watch until a process
    # holds its lock again (`WriterWatch`)
    let_go_told = False

    @property
    def session_id(self) -> str:
        return self.session.session_id

    def close(self) -> None:
        """Cancel what the runtime still has scheduled (the summary written ahead, the
        exact count waiting for quiet)."""
        self.ahead.stop()
        self.exact.stop()


class Runtimes:
    """The open sessions' runtimes by session id, and the store they are read from: the
    one place a runtime is made (at the session's first opening) and dropped (at its
    deletion, or when the store closes), each announced as `SessionOpened` /
    `SessionClosed` so a front end's own per-session state follows."""

    def __init__(
        self,
        data_dir: Callable[[], Path],
        estimator: Estimator,
        events: Events,
        *,
        own_requests: bool = False,
    ) -> None:
        self._data_dir = data_dir
        self.own_requests = own_requests  # its sessions' (`ReplayedView.own_requests`)
        self._estimator = estimator  # counts the messages; forgets a dropped session's
        self._events = events
        self._store: SessionStore | None = None
        self._by_id: dict[str, SessionRuntime] = {}
        # whether heavy work (the service's lanes) holds a session: set by the service
        self.busy: Callable[[str], bool] = lambda session_id: False
        # a write found the session's file changed and read it again: the service tells it
        self.read_again: Callable[[SessionRuntime], None] = lambda runtime: None
        # a session given by the store as read from its file (its first opening, or read
        # again): the service takes up what another process that writes it learned
        self.from_disk: Callable[[], None] = lambda: None

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            self._store = SessionStore(self._data_dir(), self._estimator.count_message)
            self._store.own_requests = self.own_requests  # before it makes a session
            self._store.in_use = self.in_use  # never closed under a request that holds it
        return self._store

    def in_use(self, session_id: str) -> bool:
        """Whether work holds the session now: a reply streaming, an auto-compaction, a
        summary written ahead, a notes update, heavy work in its lane. The store keeps
        such a session open when it closes the least recently used ones."""
        runtime = self._by_id.get(session_id)
        if runtime is None:
            return self.busy(session_id)
        ahead = runtime.ahead.entry
        return (
            runtime.replying
            or runtime.auto.lock.locked()
            or runtime.notes.running
            or (ahead is not None and ahead.task is not None and not ahead.task.done())
            or self.busy(session_id)
        )

    def of(self, session_id: str) -> SessionRuntime:
        """The session's runtime, the session read from the store (opened if need be)."""
        try:
            session = self.store.get(session_id)
        except SessionNotFound:
            # deleted elsewhere, or its file went away: a session open here is told as deleted
            self.forget(session_id, deleted=session_id in self._by_id)
            raise
        return self.opened(session)

    def opened(self, session: Session) -> SessionRuntime:
        """The runtime of a session the store just gave (made at its first opening; a
        session read again, another process's, keeps its runtime)."""
        session.read_again = partial(self._read_again, session.session_id)
        runtime = self._by_id.get(session.session_id)
        if runtime is None or runtime.session is not session:
            self.from_disk()
        if runtime is not None:
            if runtime.session is not session and runtime.reread_from is None:
                runtime.reread_from = mark(runtime.session)
                runtime.reread_read_only = runtime.session.read_only
            runtime.session = session
            self.adopt_tools(runtime)
            return runtime
        runtime = self._by_id[session.session_id] = SessionRuntime(session)
        self.adopt_tools(runtime)
        if session.auto_pause is not None:
            runtime.auto.paused_before(session.auto_pause, MAX_FAILURES)
        self._events.emit(SessionOpened(session.session_id))
        return runtime

    def _read_again(self, session_id: str) -> None:
        runtime = self._by_id.get(session_id)
        if runtime is not None:  # else dropped while a turn on it ran: nobody to tell
            self.read_again(runtime)

    def adopt_tools(self, runtime: SessionRuntime) -> None:
        """The tools the session's last send offered, as its transcript keeps them: a
        session opened again counts them as that send did."""
        tools = runtime.session.sent_tools
        if tools != (runtime.tools or []):
            runtime.tools = list(tools)
            runtime.tools_tokens = self._estimator.count_json(tools) if tools else 0

    def get(self, session_id: str) -> SessionRuntime | None:
        """The runtime of an open session, or None (never opens one)."""
        return self._by_id.get(session_id)

    # each part of an open session's runtime, for the piece that keeps it; a session that
    # is not open (deleted while work on it ran) gets a blank part that nobody keeps

    def auto_of(self, session_id: str) -> AutoState:
        runtime = self._by_id.get(session_id)
        return runtime.auto if runtime is not None else AutoState()

    def ahead_of(self, session_id: str) -> AheadState:
        runtime = self._by_id.get(session_id)
        return runtime.ahead if runtime is not None else AheadState()

    def exact_of(self, session_id: str) -> ExactState:
        runtime = self._by_id.get(session_id)
        return runtime.exact if runtime is not None else ExactState()

    def memo_of(self, session_id: str) -> UsageMemo | None:
        runtime = self._by_id.get(session_id)
        return runtime.usage if runtime is not None else None

    def forget(self, session_id: str, *, deleted: bool = False) -> None:
        """Drop the session's runtime and the store's copy: nothing of it stays."""
        runtime = self._by_id.pop(session_id, None)
        if runtime is not None:
            runtime.close()
            self._estimator.forget(runtime.session.messages)
        if self._store is not None:
            self._store.release(session_id)
        if runtime is not None or deleted:
            self._events.emit(SessionClosed(session_id, deleted=deleted))

    def close_store(self, *, final: bool = False) -> None:
        """Every session leaves, and the store lets go of its directory's locks for good,
        a session a worker thread reads meanwhile included (`SessionStore.end`); the next
        use opens a new store. `final` (the server ends): none is opened again, the ended
        store staying to refuse every open."""
        for session_id in list(self._by_id):
            self.forget(session_id)
        store = self.store if final else self._store
        if store is not None:
            store.end()
        if not final:
            self._store = None

    @property
    def store_open(self) -> bool:
        return self._store is not None

    def ids(self) -> list[str]:
        return list(self._by_id)

    def __iter__(self) -> Iterator[SessionRuntime]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)
