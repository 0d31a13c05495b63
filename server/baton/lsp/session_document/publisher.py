"""Session documents: one `Document` per open session (its version, its latest rendering,
its debounced diagnostics), made and dropped by the service's events.

The documents hear the service's events like any front end: `SessionOpened` makes a
session's document, each `SessionChanged` moves its version on and schedules diagnostics,
`SessionClosed` drops it and clears its diagnostics (a deleted session, or one of the data
dir the server let go; not at shutdown). Diagnostics are
published from the latest event's usage and session: a change is never read back from
the service."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.core.errors import BatonError, SessionNotFound
from baton.core.service.events import Event, SessionChanged, SessionClosed, SessionOpened
from baton.core.service.results import RenderData
from baton.lsp.session_document.diagnostics import build_diagnostics
from baton.lsp.session_document.off_loop import render_paused
from baton.lsp.session_document.render import (
    LazyRendering,
    RenderedSession,
    header_lines,
    render_session,
    shown_state,
)
from baton.protocol import session_uri

if TYPE_CHECKING:
    from baton.core.service.service import BatonService
    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.1  # changes this close together publish once
STREAM_INTERVAL = 0.25  # at most one publish this often while a reply streams
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
            document = self._document(event.session_id)
            if event.reason is not None:
                told, document.read_again_at = document.read_again_at, None
                if event.reason != "reload" or told != document.version:
                    self._bump(document, event.reason)
                # else the render that read it again gave this state its version already
            document.latest = event
            self.schedule(event.session_id)

    def _document(self, session_id: str) -> Document:
        return self._documents.setdefault(session_id, Document())

    def version(self, session_id: str) -> int:
        document = self._documents.get(session_id)
        return document.version if document is not None else 1

    def bump(self, session_id: str, reason: str = "") -> None:
        self._bump(self._document(session_id), reason)

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
        if data is None:
            data, version = self._read(session_id)
        elif version is None:
            version = self.version(session_id)
        document = self._document(session_id)  # made by the first look, if it came first
        return self._render(session_id, document, data, version)

    def _render(
        self, session_id: str, document: Document, data: RenderData, version: int
    ) -> tuple[RenderedSession, RenderData, int]:
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
        if data is None:
            data, version = self._read(session_id)
        elif version is None:
            version = self.version(session_id)
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

    # ---- diagnostics ---------------------------------------------------------------------

    def first_look(self, session_id: str) -> None:
        """A client looks at a session this server has published nothing for (a session
        of an earlier run, the client started again): it gets its diagnostics now, the
        meter and a damaged transcript's warning, not only after its next change."""
        document = self._documents.get(session_id)
        if document is None or document.last_publish is None:
            self.schedule(session_id)

    def schedule(self, session_id: str) -> None:
        """Publish diagnostics soon: changes within the coalescing window publish once, and
        a streaming reply publishes at most every STREAM_INTERVAL."""
        document = self._document(session_id)
        if document.pending is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        delay = COALESCE_SECONDS
        if document.latest is not None and document.latest.replying:
            since = time.monotonic() - (document.last_publish or 0.0)
            delay = max(delay, STREAM_INTERVAL - since)
        document.pending = loop.call_later(delay, self._fire, session_id)

    def _fire(self, session_id: str) -> None:
        document = self._documents.get(session_id)
        if document is None:
            return
        document.pending = None
        if document.publishing is not None:  # one at a time: this one follows it
            document.again = True
            return
        try:
            self.publish(session_id)
        except BatonError as exc:  # its file cannot be read now (a folder in its place...)
            log.warning("the diagnostics of session %s are not published: %s", session_id, exc)
        except Exception:  # a timer callback has no caller to report to
            log.exception("publishing diagnostics for %s failed", session_id)

    def publish(self, session_id: str) -> None:
        """The diagnostics of the session's latest change (a first look, with no change
        heard yet, reads the session as it is): published now when they point at no
        message, or at one of a version already rendered; else once the version is
        rendered off the event loop (`_publish_rendered`)."""
        document = self._documents.get(session_id)
        latest = document.latest if document is not None else None
        try:
            shown = latest.document() if latest is not None else None
            data = shown if shown is not None else self._service.render_data(session_id)
        except SessionNotFound:
            self.clear(session_id)
            return
        version = self._document(session_id).version  # made by the first look, if it came first
        looked = shown is None  # a look, as a get is: the session writable here now is told
        current = self.current(session_id, data, version)
        try:
            diagnostics = self._diagnostics(data, lambda: _made(current))
        except NotRendered:
            held = self._document(session_id)
            publishing = self._publish_rendered(session_id, held, data, version, looked)
            what = f"publishing the diagnostics of session {session_id}"
            held.publishing = self._service.background.spawn(publishing, what)
            if held.publishing is not None:
                return
            # no loop runs (a caller outside the server): rendered here
            diagnostics = self._diagnostics(data, lambda: self.render(session_id, data, version)[0])
        self._send(session_id, document, diagnostics, version, looked)

    async def _publish_rendered(
        self, session_id: str, document: Document, data: RenderData, version: int, looked: bool
    ) -> None:
        """The diagnostics of `data`, read at `version`, published once that version is
        rendered in the session's lane: unless the session was cleared meanwhile, or the
        documents closed. A publish that came due meanwhile follows, and shows the latest
        change."""
        try:
            rendered, _, _ = await self._service.in_lane(
                session_id,
                lambda: render_paused(lambda: self._render(session_id, document, data, version)),
            )
            if not self._closing and self._documents.get(session_id) is document:
                diagnostics = self._diagnostics(data, lambda: rendered)
                self._send(session_id, document, diagnostics, version, looked)
        except BatonError as exc:
            log.warning("the diagnostics of session %s are not published: %s", session_id, exc)
        finally:
            document.publishing = None
            held = not self._closing and self._documents.get(session_id) is document
            if document.again and held:
                document.again = False
                self.schedule(session_id)

    def _diagnostics(
        self, data: RenderData, make: Callable[[], RenderedSession]
    ) -> list[types.Diagnostic]:
        session = data.session
        header = header_lines(session.title, session.session_id, session.model, len(data.messages))
        return build_diagnostics(
            LazyRendering(header, make),  # rendered only when a diagnostic points at a message
            data.messages,
            data.usage,
            self._ls.position_encoding,
            session.damage.describe(),
            data.auto_paused_by,
            session.unpaired_tool_calls(),
        )

    def _send(
        self,
        session_id: str,
        document: Document | None,
        diagnostics: list[types.Diagnostic],
        version: int,
        looked: bool,
    ) -> None:
        if document is not None:
            document.last_publish = time.monotonic()
        self._ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=session_uri(session_id), diagnostics=diagnostics, version=version
            )
        )
        if looked:
            self._service.looked(session_id)

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


class NotRendered(Exception):
    """The diagnostics point at a message of a version not rendered yet."""


def _made(current: tuple[RenderedSession, RenderData, int] | None) -> RenderedSession:
    if current is None:
        raise NotRendered
    return current[0]
