"""Session documents: their versions, cached renderings, and debounced diagnostics."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.core.errors import SessionNotFound
from baton.core.service.results import RenderData
from baton.lsp.session_document.diagnostics import build_diagnostics
from baton.lsp.session_document.render import RenderedSession, render_session
from baton.protocol import session_uri

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.1  # changes this close together publish once
STREAM_INTERVAL = 0.25  # at most one publish this often while a reply streams
GROWN = ("append", "reply")  # changes that only add messages at the end of the view


class SessionDocuments:
    """The `baton:/sessions/<id>.md` documents: version per change, diagnostics after it."""

    def __init__(self, ls: BatonServer) -> None:
        self._ls = ls
        self._versions: dict[str, int] = {}
        # the latest rendering and its version: current while the version is, and the
        # pieces the next rendering reuses
        self._rendered: dict[str, tuple[int, RenderedSession]] = {}
        self._reshaped: set[str] = set()  # changed by more than appends since rendered
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._last_publish: dict[str, float] = {}
        self.streaming: set[str] = set()

    def version(self, session_id: str) -> int:
        return self._versions.get(session_id, 1)

    def bump(self, session_id: str, reason: str = "") -> None:
        self._versions[session_id] = self.version(session_id) + 1
        if reason not in GROWN:
            self._reshaped.add(session_id)

    def render(self, session_id: str) -> tuple[RenderedSession, RenderData, int]:
        """The document as it is now, rendered once per version and position encoding."""
        data = self._ls.service.render_data(session_id)
        version = self.version(session_id)
        encoding = self._ls.position_encoding
        cached = self._rendered.get(session_id)
        if cached is not None and cached[0] == version and cached[1].encoding == encoding:
            return cached[1], data, version
        session = data.session
        rendered = render_session(
            session.title,
            session.session_id,
            session.model,
            data.messages,
            encoding,
            cached[1] if cached is not None else None,
            grown=session_id not in self._reshaped,
        )
        self._reshaped.discard(session_id)
        self._rendered[session_id] = (version, rendered)
        return rendered, data, version

    # ---- diagnostics ---------------------------------------------------------------------

    def first_look(self, session_id: str, damaged: bool) -> None:
        """A client looks at a session this server has published nothing for: a damaged
        one gets its diagnostics now, not only after its next change."""
        if damaged and session_id not in self._last_publish:
            self.schedule(session_id)

    def schedule(self, session_id: str) -> None:
        """Publish diagnostics soon: changes within the coalescing window publish once, and
        a streaming reply publishes at most every STREAM_INTERVAL."""
        if session_id in self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        delay = COALESCE_SECONDS
        if session_id in self.streaming:
            since = time.monotonic() - self._last_publish.get(session_id, 0.0)
            delay = max(delay, STREAM_INTERVAL - since)
        self._pending[session_id] = loop.call_later(delay, self._fire, session_id)

    def _fire(self, session_id: str) -> None:
        self._pending.pop(session_id, None)
        try:
            self.publish(session_id)
        except Exception:  # a timer callback has no caller to report to
            log.exception("publishing diagnostics for %s failed", session_id)

    def publish(self, session_id: str) -> None:
        try:
            rendered, data, version = self.render(session_id)
        except SessionNotFound:
            self.clear(session_id)
            return
        diagnostics = build_diagnostics(
            rendered,
            data.messages,
            data.usage,
            self._ls.position_encoding,
            data.session.damage.describe(),
            data.auto_paused_by,
            data.session.unpaired_tool_calls(),
        )
        self._last_publish[session_id] = time.monotonic()
        self._ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=session_uri(session_id), diagnostics=diagnostics, version=version
            )
        )

    def clear(self, session_id: str) -> None:
        """A deleted session's document loses its diagnostics."""
        handle = self._pending.pop(session_id, None)
        if handle is not None:
            handle.cancel()
        self._rendered.pop(session_id, None)
        self._reshaped.discard(session_id)
        self._last_publish.pop(session_id, None)
        self._ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=session_uri(session_id), diagnostics=[])
        )

    def close(self) -> None:
        for handle in self._pending.values():
            handle.cancel()
        self._pending.clear()
