"""What the server loads once `initialize` is answered: the service with its events sent as
notifications, the session documents, and the routes of protocol.py's tables.

Everything heavy (pydantic, the wire models, core) is imported from here and from what this
imports; lsp/server.py imports none of it. `BatonServer` builds each piece at its first use
and `BatonServer.load` builds them all right after the `initialize` answer, so that a
client's first request finds them ready.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol
from baton.core.service.service import BatonService
from baton.core.usage.budget import Usage
from baton.lsp.dispatch import routes as dispatch
from baton.lsp.dispatch.progress import work_done
from baton.lsp.features import compaction, editor, sessions
from baton.lsp.session_document.publisher import SessionDocuments

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer


def attach(ls: BatonServer, service: BatonService | None = None) -> BatonService:
    """`service` (a new one by default) with its events wired to the server's client."""
    service = service or BatonService()

    def usage_changed(session_id: str, usage: Usage) -> None:
        ls.notify(protocol.USAGE_CHANGED, protocol.UsageChanged(session_id=session_id, usage=usage))
        ls.documents.schedule(session_id)

    def session_changed(session_id: str, reason: str) -> None:
        ls.documents.bump(session_id, reason)
        ls.notify(
            protocol.SESSION_CHANGED,
            protocol.SessionChanged.model_validate({"sessionId": session_id, "reason": reason}),
        )
        if reason == "delete":
            ls.documents.clear(session_id)
        else:
            ls.documents.schedule(session_id)

    def delta(session_id: str, message_id: str, text: str) -> None:
        ls.notify(
            protocol.SESSION_DELTA,
            protocol.SessionDelta(session_id=session_id, message_id=message_id, text=text),
        )

    service.on_usage_changed = usage_changed
    service.on_session_changed = session_changed
    service.on_delta = delta
    service.on_auto_compact = lambda session_id, outcome: ls.notify(
        protocol.AUTO_COMPACT,
        protocol.AutoCompacted(
            session_id=session_id,
            outcome=outcome.outcome,
            tokens_before=outcome.tokens_before,
            tokens_after=outcome.tokens_after,
            message=outcome.message,
        ),
    )
    # background auto-compactions report server-initiated, cancellable progress
    service.progress_scope = lambda title: work_done(ls, title)
    return service


def documents(ls: BatonServer) -> SessionDocuments:
    return SessionDocuments(ls)


def routes(ls: BatonServer) -> dispatch.Routes:
    """The server's own handlers behind every name of protocol.py's tables."""
    return dispatch.routes(
        ls,
        requests={**sessions.REQUESTS, **compaction.REQUESTS},
        commands=compaction.COMMANDS,
        notifications=editor.NOTIFICATIONS,
    )
