"""The data directory: where sessions live; create, open, list and delete them."""

from __future__ import annotations

import gc
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from baton.core.conversation.messages import now_iso
from baton.core.conversation.session import Session, TokenCounter
from baton.core.conversation.transcript import Transcript, check_writable
from baton.core.errors import InvalidParams, SessionNotFound

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def check_session_id(session_id: object) -> str:
    """A session id names a file: letters, digits, `_` and `-` only (no path tricks)."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise InvalidParams(f"invalid session id {session_id!r}")
    return session_id


@contextmanager
def _loading() -> Iterator[None]:
    """A load allocates most of what a session will hold. The cyclic collector stays out of
    it (it would walk the growing heap again and again), and afterwards everything alive is
    frozen out of later collections' walks, so a full collection in an append does not walk
    a million-token session (refcounting still frees what is dropped)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


def new_session_id() -> str:
    return f"s_{secrets.token_hex(8)}"


class SessionStore:
    """Sessions under `<data_dir>/sessions/`, opened once per process and kept open."""

    def __init__(self, data_dir: Path, count: TokenCounter) -> None:
        self.data_dir = data_dir
        self.count = count
        self._open: dict[str, Session] = {}

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    def path_for(self, session_id: str) -> Path:
        return self.sessions_dir / f"{check_session_id(session_id)}.jsonl"

    def create(
        self,
        title: str | None = None,
        model: str = "",
        system_prompt: str | None = None,
        session_id: str | None = None,
    ) -> Session:
        sid = check_session_id(session_id) if session_id else new_session_id()
        check_writable(
            {"title": title, "model": model, "systemPrompt": system_prompt}, "the session"
        )
        path = self.path_for(sid)
        if path.exists():
            raise InvalidParams(f"session {sid} already exists")
        created = now_iso()
        header = {
            "type": "session",
            "format": 1,
            "sessionId": sid,
            "title": title or "New conversation",
            "model": model,
            "systemPrompt": system_prompt,
            "createdAt": created,
        }
        session = Session(Transcript.create(path, header), self.count)
        self._open[sid] = session
        return session

    def get(self, session_id: str) -> Session:
        sid = check_session_id(session_id)
        session = self._open.get(sid)
        if session is None or session.read_only:
            # A read-only view is another process's session: read it again each time, so
            # it shows that process's latest turns and becomes writable once it lets go.
            path = self.path_for(sid)
            if not path.exists():
                raise SessionNotFound(f"no session {sid}")
            if session is not None:
                session.transcript.close()
            with _loading():
                session = Session(Transcript.open(path), self.count)
            self._open[sid] = session
        if session.deleted:
            raise SessionNotFound(f"session {sid} was deleted")
        return session

    def list(self) -> list[Session]:
        """Every live session, most recently updated first."""
        out: list[Session] = []
        if self.sessions_dir.is_dir():
            for path in sorted(self.sessions_dir.glob("*.jsonl")):
                if not SESSION_ID.fullmatch(path.stem):
                    continue
                try:
                    session = self.get(path.stem)
                except SessionNotFound:
                    continue
                out.append(session)
        return sorted(out, key=lambda s: s.updated_at, reverse=True)

    def delete(self, session_id: str) -> None:
        """Hide a session; its transcript stays on disk (nothing is ever lost)."""
        session = self.get(session_id)
        session.transcript.append({"type": "deleted", "at": now_iso()})
        session.deleted = True

    def release(self, session_id: str) -> None:
        """Close an open session's transcript and forget it (after its deletion): a later
        `get` reads it from its file again."""
        session = self._open.pop(session_id, None)
        if session is not None:
            session.transcript.close()

    def close(self) -> None:
        for session in self._open.values():
            session.transcript.close()
        self._open.clear()
