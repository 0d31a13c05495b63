"""A session's id and title as they are given: an id names a file (checked, or made new),
a title is one short line (checked)."""

from __future__ import annotations

import secrets

from baton.core.conversation.listing import SESSION_ID
from baton.core.conversation.transcript import check_writable
from baton.core.errors import InvalidParams

SESSION_ID_MAX_CHARS = 128  # as SESSION_ID takes them
SHOWN_ID_CHARS = 60  # of a refused id far longer than any: its start and its length


def check_session_id(session_id: object) -> str:
    """A session id names a file: letters, digits, `_` and `-` only (no path tricks)."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise InvalidParams(f"invalid session id {_shown(session_id)}")
    return session_id


def _shown(session_id: object) -> str:
    """The refused id as the error names it: whole, or, far past the longest an id may be
    (a megabyte sent as one), its start and its length, not quoted whole."""
    if not isinstance(session_id, str) or len(session_id) <= 2 * SESSION_ID_MAX_CHARS:
        return repr(session_id)
    start = repr(session_id[:SHOWN_ID_CHARS])[:-1]
    return f"{start}...' ({len(session_id):,} characters; an id is at most {SESSION_ID_MAX_CHARS})"


def new_session_id() -> str:
    return f"s_{secrets.token_hex(8)}"


TITLE_MAX_CHARS = 200


def checked_title(title: str) -> str:
    """A session's title as given to create or rename: trimmed, one line of 1 to
    TITLE_MAX_CHARS characters without control characters (else InvalidParams)."""
    title = title.strip()
    if not title:
        raise InvalidParams("title must not be empty")
    if len(title) > TITLE_MAX_CHARS:
        raise InvalidParams(f"title must be at most {TITLE_MAX_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in title):
        raise InvalidParams("title must be one line without control characters")
    check_writable(title, "title")
    return title
