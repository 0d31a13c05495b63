"""The data directory: where sessions live; create, open, list and delete them."""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Container
from contextlib import AbstractContextManager
from pathlib import Path

from baton.core.conversation import transcript_ends
from baton.core.conversation.files import exists
from baton.core.conversation.folders import access_problems, linked_folder
from baton.core.conversation.held_open import MAX_OPEN as MAX_OPEN
from baton.core.conversation.held_open import open_bound, read_again
from baton.core.conversation.listing import SESSION_ID as SESSION_ID
from baton.core.conversation.listing import SessionIndex, Summary, file_of, listed
from baton.core.conversation.messages import now_iso
from baton.core.conversation.session import Session, TokenCounter
from baton.core.conversation.session_header import new_header
from baton.core.conversation.session_names import check_session_id, checked_title, new_session_id
from baton.core.conversation.summary_entry import Entry
from baton.core.conversation.transcript import Transcript
from baton.core.conversation.transcript_summary import written_summary
from baton.core.errors import InvalidParams, SessionNotFound, StorageError, TranscriptError
from baton.core.memory import loading


class SessionStore:
    """Sessions under `<data_dir>/sessions/`.

    `get` (or `open`) opens a session and keeps it open, up to `max_open` of them
    (`open_bound()`): past that, the least recently used one that is not in use
    (compacting, or named by `in_use`) is closed, so descriptors and locks stay bounded.
    `list` opens none: it reads the index (`listing.py`). `release` closes one session,
    `close` all of them, `end` all of them for good.
    """

    def __init__(self, data_dir: Path, count: TokenCounter, *, max_open: int | None = None) -> None:
        self.data_dir = data_dir
        self.count = count
        self.own_requests = False  # its sessions' (`ReplayedView.own_requests`)
        self.max_open = open_bound() if max_open is None else max_open
        self.in_use: Callable[[str], bool] = lambda session_id: False
        self._open: OrderedDict[str, Session] = OrderedDict()
        # sessions closed to stay within max_open that someone still holds (a turn in
        # progress): `get` hands back that same object, so there are never two of one
        self._closed: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        self._index = SessionIndex()
        # `end`: nothing is kept open any more, a session read meanwhile in a worker
        # thread included (the lock makes the check and the keeping one step)
        self._ended = False
        self._ending = threading.Lock()

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    def path_for(self, session_id: str) -> Path:
        """The session's transcript; `StorageError` while the sessions folder is a link,
        which Baton never reads or writes through (`linked_folder`)."""
        linked = linked_folder(self.sessions_dir)
        if linked:
            raise StorageError(linked, path=str(self.sessions_dir))
        return self.sessions_dir / f"{check_session_id(session_id)}.jsonl"

    def open_ids(self) -> list[str]:
        """The sessions open now (least recently used first), deleted ones left out."""
        return [sid for sid, s in self._open.items() if not s.deleted]

    def create(
        self,
        title: str | None = None,
        model: str = "",
        system_prompt: str | None = None,
        session_id: str | None = None,
    ) -> Session:
        sid = check_session_id(session_id) if session_id else new_session_id()
        header = new_header(sid, title, model, system_prompt)
        self._refuse_if_ended(sid)
        path = self.path_for(sid)
        if os.path.lexists(path):
            raise InvalidParams(f"session {sid} already exists")
        transcript = Transcript.create(path, header)
        session = Session(transcript, self.count, session_id=sid, own_requests=self.own_requests)
        self._keep(sid, session)
        return session

    def get(self, session_id: str) -> Session:
        """The session, opened (for writing when it can be) and kept open."""
        sid = check_session_id(session_id)
        self._refuse_if_ended(sid)
        session = self._open.get(sid)
        reloaded = False
        if session is None:
            session = self._closed.pop(sid, None)  # its file is opened again at its next write
            if session is not None and session.transcript.moved_on():
                # another process wrote it while it was closed here
                reloaded = session.reload()
            if session is not None and not read_again(session):
                self._keep(sid, session)
        if session is None or read_again(session):
            path = self.path_for(sid)
            if not exists(path):
                self.release(sid)
                raise SessionNotFound(f"no session {sid}")
            if session is not None:
                session.transcript.close()
            elif transcript_ends.deleted(path):  # told from its last line, not replayed
                raise SessionNotFound(f"session {sid} was deleted")
            try:
                session = self.load(sid)
            except TranscriptError:  # gone between the check and the open
                self.release(sid)
                raise SessionNotFound(f"no session {sid}") from None
            self._keep(sid, session)
        else:
            self._open.move_to_end(sid)
        if session.deleted:
            self._let_go(sid, session)
            raise SessionNotFound(f"session {sid} was deleted")
        if reloaded and session.read_again is not None:
            session.read_again()  # told once kept: whoever hears it gets this same object
        return session

    open = get

    def load(self, session_id: str) -> Session:
        """The session read from its file and not kept: for a caller that reads it in a
        worker thread (an import's new session, which may be big) and hands it to `adopt`
        on the loop. Safe off the loop: nothing of the store but its paths and its counter
        is used."""
        sid = check_session_id(session_id)
        with loading():
            transcript = Transcript.open(self.path_for(sid))
            return Session(transcript, self.count, session_id=sid, own_requests=self.own_requests)

    def adopt(self, session: Session) -> Session:
        """A session `load` read, kept open as `get` keeps one. When that session is open
        already, the open one is kept (every holder has the same object) and this is closed."""
        sid = session.session_id
        if sid in self._open or sid in self._closed:
            session.transcript.close()
            return self.get(sid)
        self._keep(sid, session)
        return session

    def delete(self, session_id: str) -> None:
        """Hide a session; its transcript stays on disk (nothing is ever lost). A damaged
        one (its header lost, or naming another session) is never written to: refused.
        One that is not held is not read for it: its header and its end are enough."""
        sid = check_session_id(session_id)
        if sid not in self._open and sid not in self._closed:
            path = self.path_for(sid)
            if transcript_ends.deleted(path):
                raise SessionNotFound(f"session {sid} was deleted")
            if transcript_ends.delete_unread(path, sid, {"type": "deleted", "at": now_iso()}):
                self._index.drop_size(sid)
                return
        session = self.get(session_id)
        session.refuse_if_read_only()
        session.transcript.append_last({"type": "deleted", "at": now_iso()})
        session.deleted = True
        self._index.drop_size(session_id)
        self._let_go(session_id, session)

    def rename(self, session_id: str, title: str) -> Session:
        """A new title, appended to the transcript (a `meta` record; nothing rewritten)."""
        session = self.get(session_id)
        title = checked_title(title)
        if title != session.title:
            session.set_meta(title=title)
        return session

    def note_size(self, session_id: str, tokens: int) -> None:
        """The context size a change of the session left, kept for the list while its file
        stays as the session holds it: not for a session another process writes, nor
        past a change another process makes."""
        session = self._open.get(session_id) or self._closed.get(session_id)
        self._index.note_size(session_id, tokens, file_of(session))

    def context_size(self, session: Session | Summary) -> int | None:
        """The last known context size of a listed session (None: unknown)."""
        if isinstance(session, Summary):
            return session.context_tokens
        return self._index.size(session.session_id, file_of(session))

    def release(self, session_id: str) -> None:
        """Close one session (its descriptor and lock); the next `get` opens it again."""
        session = self._open.pop(session_id, None)
        if session is not None:
            session.transcript.close()

    def _let_go(self, sid: str, session: Session) -> None:
        """A deleted session is never written again: its descriptor and lock go, and so
        does what it holds once nobody else has it (a caller that still does finds it
        deleted, as `get` does while it lives)."""
        self.release(sid)
        self._closed[sid] = session

    def close(self) -> None:
        """Close every session; the next `get` of each reads it again from its file."""
        for session in self._open.values():
            session.transcript.close()
        self._open.clear()
        self._closed.clear()

    def end(self) -> None:
        """Close every session for good (the data dir let go, or the server ends), so that
        another process may write them at once: a session a worker thread reads meanwhile
        is closed as soon as it is read, never kept, and none is opened any more."""
        with self._ending:
            self._ended = True
            self.close()

    def _refuse_if_ended(self, sid: str) -> None:
        if self._ended:
            raise StorageError(
                f"session {sid} was not opened: Baton let go of {self.data_dir} (its data "
                "dir changed, or the server is ending)",
                path=str(self.data_dir),
            )

    def access_problems(self) -> list[str]:
        """What Baton cannot do in its data dir (`folders.access_problems`)."""
        return access_problems(self.data_dir, self.sessions_dir)

    def _keep(self, sid: str, session: Session) -> None:
        with self._ending:
            if self._ended:  # read in a worker thread while `end` let go of the others
                session.transcript.close()
                self._refuse_if_ended(sid)
            self._open[sid] = session
            self._open.move_to_end(sid)
            excess = len(self._open) - self.max_open
            for other in list(self._open):
                if excess <= 0:
                    break
                if other != sid and self.put_down(other):
                    excess -= 1

    def put_down(self, session_id: str) -> bool:
        """Close an open session's file (its descriptor and lock), keeping what it holds:
        another process may write it meanwhile, and the next `get` opens it again, reading
        what that process wrote. One in use (compacting, or named by `in_use`) stays open;
        whether it was closed."""
        held = self._open.get(session_id)
        if held is None or held.compacting or self.in_use(session_id):
            return False
        self.release(session_id)
        self._closed[session_id] = held
        return True

    def held(self) -> frozenset[str]:
        """The sessions open here, as a list finds them held (deleted ones too)."""
        return frozenset(self._open)

    def summaries(self, held: Container[str]) -> list[Summary] | None:
        """The index brought up to date and its summaries (`held`: the sessions open here),
        or None for a sessions folder that is a link (nothing read through it). The reads
        of a list: safe in a worker thread while the event loop changes sessions."""
        if linked_folder(self.sessions_dir):  # nothing read through it (the start said so)
            return None
        return self._index.summaries(self.sessions_dir, held=held)

    def note_read(self, session_id: str) -> None:
        """The session's entry of the list's index made up to date (`SessionIndex.note_read`)."""
        if not linked_folder(self.sessions_dir):
            self._index.note_read(self.sessions_dir, check_session_id(session_id))

    def note_written(self, session_id: str, st: os.stat_result, entry: Entry) -> None:
        """The session's entry of the list's index: `entry`, given all its writer wrote
        (`Entry.written`), of the file as `st` says (an import's, `SessionIndex.note_written`):
        the next list reads none of it."""
        if linked_folder(self.sessions_dir):
            return  # nothing is read through it
        try:
            entry = written_summary(str(self.path_for(session_id)), st, entry)
        except (OSError, StorageError):
            return  # left to the list, which says why it cannot read the file
        self._index.note_written(session_id, entry)

    def being_read(self, session_id: str) -> AbstractContextManager[None]:
        """While a load reads the session whole: `SessionIndex.being_read`."""
        return self._index.being_read(check_session_id(session_id))

    def listed(self, summaries: list[Summary] | None) -> list[Session | Summary]:
        """`list` of the `summaries` read: the sessions open here as they are."""
        return listed(summaries, self._open, self.sessions_dir)

    def list(self) -> list[Session | Summary]:
        """Every live session, most recently updated first: an open one as it is, the
        others from the index (no session is opened, no file written, nothing but regular
        files read)."""
        return self.listed(self.summaries(self.held()))
