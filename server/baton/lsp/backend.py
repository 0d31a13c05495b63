"""What the server loads once `initialize` is answered: the service connected to the
client (its events sent as notifications), the session documents, and the routes of
protocol.py's tables.

Everything heavy (pydantic, the wire models, core) is imported from here and from what this
imports; lsp/server.py imports none of it. `BatonServer` builds each piece at its first use
and `BatonServer.load` builds them all right after the `initialize` answer, so that a
client's first request finds them ready.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol
from baton.core.service.events import (
    AutoCompacted,
    DataDirChanged,
    Event,
    ReplyText,
    SessionChanged,
    SessionClosed,
)
from baton.core.service.service import BatonService
from baton.lsp.dispatch import routes as dispatch
from baton.lsp.dispatch.progress import work_done
from baton.lsp.features import compaction, editor, sessions, settings
from baton.lsp.session_document.publisher import SessionDocuments

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer


def attach(ls: BatonServer, service: BatonService | None = None) -> BatonService:
    """`service` (a new one by default) connected to the server's client: each event
    becomes the notifications it stands for, and background work (auto-compaction)
    reports server-initiated, cancellable progress."""
    service = service or BatonService()
    service.connect(lambda event: notify(ls, event), progress=lambda title: work_done(ls, title))
    return service


def notify(ls: BatonServer, event: Event) -> None:
    """The client's notifications of one event, from what the event carries."""
    if isinstance(event, ReplyText):
        ls.notify(
            protocol.SESSION_DELTA,
            protocol.SessionDelta(
                session_id=event.session_id, message_id=event.message_id, text=event.text
            ),
        )
    elif isinstance(event, SessionChanged):
        if event.reason is not None:
            changed = {"sessionId": event.session_id, "reason": event.reason}
            ls.notify(protocol.SESSION_CHANGED, protocol.SessionChanged.model_validate(changed))
        if event.tell_usage:
            usage = protocol.UsageChanged(session_id=event.session_id, usage=event.usage)
            ls.notify(protocol.USAGE_CHANGED, usage)
    elif isinstance(event, AutoCompacted) and event.outcome.outcome != "cancelled":
        # a cancelled attempt changed nothing: its work-done progress (if any) just ends
        outcome = event.outcome
        told = protocol.AutoCompacted(
            session_id=event.session_id,
            outcome="compacted" if outcome.outcome == "compacted" else "failed",
            tokens_before=outcome.tokens_before,
            tokens_after=outcome.tokens_after,
            message=outcome.message,
            dropped=outcome.dropped,
        )
        ls.notify(protocol.AUTO_COMPACT, told)
    elif isinstance(event, SessionClosed) and event.deleted:
        deleted = {"sessionId": event.session_id, "reason": "delete"}
        ls.notify(protocol.SESSION_CHANGED, protocol.SessionChanged.model_validate(deleted))
    elif isinstance(event, DataDirChanged):
        settings.data_dir_changed(ls, event)


def documents(ls: BatonServer, service: BatonService) -> SessionDocuments:
    """The session documents, connected to the service's events after the notifications
    (a deleted session's `sessionChanged` goes out before its diagnostics are cleared)."""
    return SessionDocuments(ls, service)


def routes(ls: BatonServer) -> dispatch.Routes:
    """The server's own handlers behind every name of protocol.py's tables."""
    return dispatch.routes(
        ls,
        requests={**sessions.REQUESTS, **compaction.REQUESTS},
        commands=compaction.COMMANDS,
        notifications=editor.NOTIFICATIONS,
    )
