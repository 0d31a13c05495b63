"""A session document's diagnostics, published after its changes: the changes that come
close together published once (a streaming reply's at most every STREAM_INTERVAL), from
the latest change heard, without asking the service again.

Diagnostics that point at a message (a large message's hint, an unpaired tool call's
warning) read the document's rendering: one made for the version is used at once;
else it is made in the session's lane, off the event loop (`off_loop.py`), and the
diagnostics published once it is made, one such publish at a time a document."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.core.errors import BatonError, SessionNotFound
from baton.core.service.results import RenderData
from baton.lsp.session_document.diagnostics import build_diagnostics
from baton.lsp.session_document.off_loop import render_paused
from baton.lsp.session_document.render import LazyRendering, RenderedSession, header_lines
from baton.protocol import session_uri

if TYPE_CHECKING:
    from baton.core.service.service import BatonService
    from baton.lsp.server import BatonServer
    from baton.lsp.session_document.publisher import Document, SessionDocuments

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.1  # changes this close together publish once
STREAM_INTERVAL = 0.25  # at most one publish this often while a reply streams


class DiagnosticsPublisher:
    """The diagnostics of the session documents `documents` holds."""

    def __init__(self, documents: SessionDocuments, ls: BatonServer, service: BatonService) -> None:
        self._documents = documents
        self._ls = ls
        self._service = service

    def first_look(self, session_id: str) -> None:
        """A client looks at a session this server has published nothing for (a session
        of an earlier run, the client started again): it gets its diagnostics now, the
        meter and a damaged transcript's warning, not only after its next change."""
        document = self._documents.held(session_id)
        if document is None or document.last_publish is None:
            self.schedule(session_id)

    def schedule(self, session_id: str) -> None:
        """Publish diagnostics soon: changes within the coalescing window publish once, and
        a streaming reply publishes at most every STREAM_INTERVAL."""
        document = self._documents.document(session_id)
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
        document = self._documents.held(session_id)
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
        document = self._documents.held(session_id)
        latest = document.latest if document is not None else None
        try:
            shown = latest.document() if latest is not None else None
            data = shown if shown is not None else self._service.render_data(session_id)
        except SessionNotFound:
            self._documents.clear(session_id)
            return
        version = self._documents.document(
            session_id
        ).version  # made by the first look, if it came first
        looked = shown is None  # a look, as a get is: the session writable here now is told
        current = self._documents.current(session_id, data, version)
        try:
            diagnostics = self._diagnostics(data, lambda: _made(current))
        except NotRendered:
            held = self._documents.document(session_id)
            publishing = self._publish_rendered(session_id, held, data, version, looked)
            what = f"publishing the diagnostics of session {session_id}"
            held.publishing = self._service.background.spawn(publishing, what)
            if held.publishing is not None:
                return
            # no loop runs (a caller outside the server): rendered here
            diagnostics = self._diagnostics(
                data, lambda: self._documents.render(session_id, data, version)[0]
            )
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
                lambda: render_paused(
                    lambda: self._documents.render_held(session_id, document, data, version)
                ),
            )
            if not self._documents.closing and self._documents.held(session_id) is document:
                diagnostics = self._diagnostics(data, lambda: rendered)
                self._send(session_id, document, diagnostics, version, looked)
        except BatonError as exc:
            log.warning("the diagnostics of session %s are not published: %s", session_id, exc)
        finally:
            document.publishing = None
            held = not self._documents.closing and self._documents.held(session_id) is document
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


class NotRendered(Exception):
    """The diagnostics point at a message of a version not rendered yet."""


def _made(current: tuple[RenderedSession, RenderData, int] | None) -> RenderedSession:
    if current is None:
        raise NotRendered
    return current[0]
