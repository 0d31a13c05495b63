"""Session documents: one `Document` per open session (its version, its latest rendering,
its debounced diagnostics), made and dropped by the service's events.

The documents hear the service's events like any front end: `SessionOpened` makes a
session's document, each `SessionChanged` moves its version on and schedules diagnostics,
`SessionClosed` drops it and clears its diagnostics (a deleted session, or one of the data
dir the server let go; not at shutdown). Diagnostics are published from the latest
event's usage and session (`diagnostics_publisher.py`): a change is never read back from
the service."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.core.errors import SessionNotFound
from baton.core.service.events import Event, SessionChanged, SessionClosed, SessionOpened
from baton.core.service.results import RenderData
from baton.lsp.session_document.diagnostics_publisher import DiagnosticsPublisher
from baton.lsp.session_document.render import (
    RenderedSession,
    render_session,
    shown_state,
)
from baton.protocol import session_uri

if TYPE_CHECKING:
    from baton.core.service.service import BatonService
    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)

GROWN = ("append", "reply")  # changes that only add messages at the end of the view


@dataclass(frozen=True, slots=True)
class Rendering:
    """A rendering and what it shows: the document's version, and the session's revision
    and `shown_state` it was made from."""

    version: int
    revision: int
    state: int
    session: RenderedSession


@dataclass(eq=False)
class Document:
    """One session's document. `rendered` is the latest rendering: current while the version
    is (and the session shows what it was made from), and the pieces the next one reuses."""

    version: int = 1
    rendered: Rendering | None = None
    reshaped: bool = False  # changed by more than appends since rendered
    pending: asyncio.TimerHandle | None = None
    last_publish: float | None = None
    latest: SessionChanged | None = None  # the last change: what the next publish shows
    read_again_at: int | None = None  # the version a render's reading again took, until told
    publishing: asyncio.Task[None] | None = None  # a publish whose rendering is made off the loop
    again: bool = False  # a publish came due meanwhile: it follows that one

    def cancel(self) -> None:
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.cancel()
        publishing, self.publishing = self.publishing, None
        if publishing is not None:
            publishing.cancel()


class SessionDocuments:
    """The `baton:/sessions/<id>.md` documents: version per change, diagnostics after it."""

    def __init__(self, ls: BatonServer, service: BatonService | None = None) -> None:
        self._ls = ls
        self._service = service if service is not None else ls.service
        self._documents: dict[str, Document] = {}
        self._bumping = threading.Lock()  # versions move on the loop and in a render's thread
        self._closing = False  # shutdown: the sessions let go keep what the client shows
        self.diagnostics = DiagnosticsPublisher(self, ls, self._service)
        self._service.connect(self.heard)
        try:  # a render request renders in a worker thread: what it finds is told on the loop
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    def heard(self, event: Event) -> None:
        """One event of the service: the documents follow it."""
        if isinstance(event, SessionOpened):
            self._documents.setdefault(event.session_id, Document())
        elif isinstance(event, SessionClosed):
            if self._closing:
                self._drop(event.session_id)
            else:  # deleted, or its data dir let go: no meter of a session not served
                self.clear(event.session_id)
        elif isinstance(event, SessionChanged):
            document = self.document(event.session_id)
            if event.reason is not None:
                told, document.read_again_at = document.read_again_at, None
                if event.reason != "reload" or told != document.version:
                    self._bump(document, event.reason)
                # else the render that read it again gave this state its version already
            document.latest = event
            self.schedule(event.session_id)

    def document(self, session_id: str) -> Document:
        """The session's document, made when it has none yet."""
        return self._documents.setdefault(session_id, Document())

    def held(self, session_id: str) -> Document | None:
        """The session's document, or None: it has none (never heard of, or dropped)."""
        return self._documents.get(session_id)

    @property
    def closing(self) -> bool:
        """The documents are closed (shutdown): nothing more is published."""
        return self._closing

    def version(self, session_id: str) -> int:
        document = self._documents.get(session_id)
        return document.version if document is not None else 1

    def bump(self, session_id: str, reason: str = "") -> None:
        self._bump(self.document(session_id), reason)

    def _bump(self, document: Document, reason: str) -> int:
        with self._bumping:
            document.version += 1
            if reason not in GROWN:
                document.reshaped = True
            return document.version

    def render(
        self, session_id: str, data: RenderData | None = None, version: int | None = None
    ) -> tuple[RenderedSession, RenderData, int]:
        """The document as it is now (or as `data`, an event's, read at `version`, shows
        it), rendered once per version and position encoding. It renders in a worker thread
        (`off_loop`) while the loop goes on changing the session: the version is the one
        the data was read at, and a rendering is kept only when no change landed while it
        was made."""
        data, version = self._shown(session_id, data, version)
        document = self.document(session_id)  # made by the first look, if it came first
        return self.render_held(session_id, document, data, version)

    def render_held(
        self, session_id: str, document: Document, data: RenderData, version: int
    ) -> tuple[RenderedSession, RenderData, int]:
        """`render` into `document`, the session's as the caller found it: a publish
        rendering in a thread never makes a document again for a session dropped
        meanwhile."""
        encoding = self._ls.position_encoding
        session = data.session
        revision = session.revision  # read before rendering: a pin changes a message in place
        cached, state = document.rendered, None
        if cached is not None and cached.version == version:
            if cached.revision != revision:
                state = shown_state(session.title, session_id, session.model, data.messages)
            if state is not None and state != cached.state:
                version = self._read_again(session_id, document)
            elif cached.session.encoding == encoding:
                return cached.session, data, version
        if state is None:
            state = shown_state(session.title, session_id, session.model, data.messages)
        rendered = render_session(
            session.title,
            session.session_id,
            session.model,
            data.messages,
            encoding,
            cached.session if cached is not None else None,
            grown=not document.reshaped,
        )
        with self._bumping:
            if document.version == version:  # else a change landed while it rendered
                document.reshaped = False
                document.rendered = Rendering(version, revision, state, rendered)
        return rendered, data, version

    def current(
        self, session_id: str, data: RenderData | None = None, version: int | None = None
    ) -> tuple[RenderedSession, RenderData, int] | None:
        """What `render` returns, when the version's rendering is made (of the session as
        it shows now, in the client's position encoding); else None: a render is due, to
        be made off the event loop."""
        data, version = self._shown(session_id, data, version)
        document = self._documents.get(session_id)
        cached = document.rendered if document is not None else None
        if (
            cached is None
            or cached.version != version
            or cached.revision != data.session.revision
            or cached.session.encoding != self._ls.position_encoding
        ):
            return None
        return cached.session, data, version

    def _shown(
        self, session_id: str, data: RenderData | None, version: int | None
    ) -> tuple[RenderData, int]:
        """`data` read at `version` when given (the document's version now when not), else
        the session as it is now (`_read`)."""
        if data is None:
            return self._read(session_id)
        return data, self.version(session_id) if version is None else version

    def _read(self, session_id: str) -> tuple[RenderData, int]:
        """The session's data and the document version it shows (read again when a change
        landed while it was read)."""
        while True:
            version = self.version(session_id)
            data = self._service.render_data(session_id)
            if self.version(session_id) == version:
                return data, version

    def _read_again(self, session_id: str, document: Document) -> int:
        """The session shows another state than the current version was rendered from, with
        no change heard: it was read again from its file (another process writes it, or
        another program did while it was closed here). The document takes a new version
        now, and the service tells the change (`reload`: its usage and diagnostics follow)."""
        version = self._bump(document, "read again")
        document.read_again_at = version  # the `reload` this tells is this version's
        document.latest = None  # the last change heard no longer shows the session
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._tell_usage, session_id)
        return version

    def _tell_usage(self, session_id: str) -> None:
        try:
            self._service.read_again(session_id)
        except SessionNotFound:
            self.clear(session_id)

    # ---- diagnostics (`diagnostics_publisher.py`) ---------------------------------------

    def first_look(self, session_id: str) -> None:
        self.diagnostics.first_look(session_id)

    def schedule(self, session_id: str) -> None:
        self.diagnostics.schedule(session_id)

    def publish(self, session_id: str) -> None:
        self.diagnostics.publish(session_id)

    def clear(self, session_id: str) -> None:
        """A session no longer served (deleted, or its data dir let go) loses its
        diagnostics."""
        self._drop(session_id)
        self._ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=session_uri(session_id), diagnostics=[])
        )

    def _drop(self, session_id: str) -> None:
        document = self._documents.pop(session_id, None)
        if document is not None:
            document.cancel()

    def publishing(self, session_id: str) -> asyncio.Task[None] | None:
        """The session's publish whose rendering is made off the loop, while it runs."""
        document = self._documents.get(session_id)
        return document.publishing if document is not None else None

    def open_ids(self) -> list[str]:
        """The sessions that have a document (what the tests walk for leftovers)."""
        return list(self._documents)

    def close(self) -> None:
        self._closing = True
        for document in self._documents.values():
            document.cancel()
