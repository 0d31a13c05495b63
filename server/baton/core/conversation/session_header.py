"""A new session's header, the first line of its transcript: its id, its title (a default
one when none is given), model and system prompt as given, and the time it was made."""

from __future__ import annotations

from baton.core.conversation.messages import now_iso
from baton.core.conversation.session_names import checked_title
from baton.core.conversation.transcript import Event, check_writable

DEFAULT_TITLE = "New conversation"  # a session made with no title of its own


def new_header(sid: str, title: str | None, model: str, system_prompt: str | None) -> Event:
    """The header of a session Baton makes; its title checked (a blank one: none given, the
    default title) and every field one a transcript can hold, else InvalidParams."""
    if title is not None:
        title = checked_title(title) if title.strip() else None
    check_writable({"title": title, "model": model, "systemPrompt": system_prompt}, "the session")
    return {
        "type": "session",
        "format": 1,
        "sessionId": sid,
        "title": title or DEFAULT_TITLE,
        "model": model,
        "systemPrompt": system_prompt,
        "createdAt": now_iso(),
        "marksToolLoop": True,  # every message of the tool loop carries `toolLoop`
    }
