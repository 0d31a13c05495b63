"""A session document rendered for its diagnostics, a code action or a hover is rendered
in a worker thread: after a change that reshapes a long session (a compaction, an undo,
a rewind) the next of them rendered it all again on the event loop, holding every other
session's requests (a 50 MB message: 0.4-0.5 s; 100,000 messages: some 5 s). Checked by
ordering: another session is answered while the render is held. The publish keeps its
promises meanwhile: one in flight a document, the version it rendered published, the
latest state after it, a deleted session's clear last, nothing after the close."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from code_action_client import taking_code_actions
from lsprotocol import types
from test_off_loop import WAIT, Gate, turns

from baton import protocol as p
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import documents as document_features
from baton.lsp.features import sessions
from baton.lsp.features.common import Call
from baton.lsp.server import BatonServer, create_server
from baton.lsp.session_document import publisher
from baton.lsp.session_document.diagnostics import LARGE_CODE
from baton.lsp.session_document.diagnostics_publisher import DiagnosticsPublisher
from baton.lsp.session_document.hover import hover_at
from baton.lsp.session_document.render import USAGE_LINE


class RenderGate(Gate):
    """Holds the session documents' renders, once armed, in the thread they run in; one
    that runs on the event loop is noted and let through (held there, it would hold the
    test's own loop)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.on_loop = False

    def hold(self) -> None:
        if not self.armed:
            return
        if threading.current_thread() is threading.main_thread():
            self.on_loop = True
            self.entered.set()
            return
        super().hold()


class Published:
    """The diagnostics the server publishes, in order; `large` is set once a large
    message's hint is among them."""

    def __init__(self, server: BatonServer) -> None:
        self.sent: list[types.PublishDiagnosticsParams] = []
        self.large = asyncio.Event()
        server.text_document_publish_diagnostics = self.publish  # type: ignore[method-assign]

    def publish(self, params: types.PublishDiagnosticsParams) -> None:
        self.sent.append(params)
        if any(d.code == LARGE_CODE for d in params.diagnostics):
            self.large.set()

    def of(self, session_id: str) -> list[types.PublishDiagnosticsParams]:
        return [s for s in self.sent if s.uri == p.session_uri(session_id)]

    def with_large(self, session_id: str) -> list[int | None]:
        """The versions of the session's publishes that carry a large message's hint."""
        return [
            s.version
            for s in self.of(session_id)
            if any(d.code == LARGE_CODE for d in s.diagnostics)
        ]


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[RenderGate]:
    held = RenderGate()
    original = publisher.render_session

    def render_session(*args: Any, **kwargs: Any) -> Any:
        held.hold()
        return original(*args, **kwargs)

    monkeypatch.setattr(publisher, "render_session", render_session)
    yield held
    held.release.set()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[BatonServer]:
    # a 20,000-token window: a message over 1,000 tokens gets a large message's hint
    settings = Settings.model_validate(
        {"dataDir": str(tmp_path), "contextWindow": 20_000, "autoCompact": {"enabled": False}}
    )
    yield create_server(BatonService(settings))


LARGE = [p.MessageInput(role="user", content=" ".join(f"line{j}" for j in range(3_000)))]


async def _two_sessions(call: Call) -> tuple[str, str]:
    ids = []
    for title in ("held", "other"):
        sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
        await sessions.append(call, p.AppendParams(session_id=sid, messages=turns(3, 50)))
        ids.append(sid)
    return ids[0], ids[1]


async def _other_answered(call: Call, other: str) -> None:
    usage = await sessions.usage(call, p.UsageParams(session_id=other))
    view = await sessions.get(call, p.PageParams(session_id=other))
    assert usage.used_tokens > 0 and len(view.messages) == 6


async def _large_appended(
    server: BatonServer, gate: RenderGate
) -> tuple[Call, Published, str, str]:
    """Two sessions; a large message appended to the first, whose publish's render (due
    after the append) is held in its thread, off the loop."""
    call = Call(server)
    published = Published(server)
    held, other = await _two_sessions(call)
    gate.armed = True
    await sessions.append(call, p.AppendParams(session_id=held, messages=LARGE))
    assert await gate.wait_entered()
    assert not gate.on_loop
    return call, published, held, other


async def test_diagnostics_pointing_at_a_message_are_rendered_off_the_loop(
    server: BatonServer, gate: RenderGate
) -> None:
    call, published, held, other = await _large_appended(server, gate)
    await _other_answered(call, other)
    assert not published.large.is_set()  # still rendering meanwhile
    gate.release.set()
    await asyncio.wait_for(published.large.wait(), WAIT)
    assert published.with_large(held) == [server.documents.version(held)]


async def test_a_code_action_renders_off_the_loop(server: BatonServer, gate: RenderGate) -> None:
    call = Call(taking_code_actions(server))
    held, other = await _two_sessions(call)
    gate.armed = True
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=p.session_uri(held)),
        range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    asking = asyncio.ensure_future(document_features.code_action(server, params))
    assert await gate.wait_entered()
    assert not gate.on_loop
    await _other_answered(call, other)
    assert not asking.done()
    gate.release.set()
    actions = await asyncio.wait_for(asking, WAIT)
    assert actions and all(isinstance(a, types.CodeAction) for a in actions)


async def test_a_hover_renders_off_the_loop(server: BatonServer, gate: RenderGate) -> None:
    call = Call(server)
    held, other = await _two_sessions(call)
    gate.armed = True
    asking = asyncio.ensure_future(hover_at(server, held, USAGE_LINE))
    assert await gate.wait_entered()
    assert not gate.on_loop
    await _other_answered(call, other)
    assert not asking.done()
    gate.release.set()
    found = await asyncio.wait_for(asking, WAIT)
    assert found is not None and "tokens" in str(found.contents)


async def test_a_change_during_the_render_is_published_after_it(
    server: BatonServer, gate: RenderGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    call, published, held, _ = await _large_appended(server, gate)
    rendered = server.documents.version(held)
    due = asyncio.Event()
    fire = DiagnosticsPublisher._fire

    def fired(diagnostics: DiagnosticsPublisher, session_id: str) -> None:
        fire(diagnostics, session_id)
        due.set()

    monkeypatch.setattr(DiagnosticsPublisher, "_fire", fired)
    await sessions.append(call, p.AppendParams(session_id=held, messages=turns(1, 50)))
    await asyncio.wait_for(due.wait(), WAIT)  # its publish came due while the render is held
    assert published.with_large(held) == []
    gate.armed = False  # the next render goes through
    gate.release.set()
    latest = server.documents.version(held)
    for _ in range(int(WAIT / 0.01)):  # bounded: until the latest version is published
        if latest in published.with_large(held):
            break
        await asyncio.sleep(0.01)
    # the version rendered first, then the latest (none in between, none twice)
    assert published.with_large(held) == [rendered, latest]


async def test_a_session_deleted_during_the_render_stays_cleared(
    server: BatonServer, gate: RenderGate
) -> None:
    call, published, held, _ = await _large_appended(server, gate)
    publishing = server.documents.publishing(held)
    await sessions.delete(call, p.SessionParams(session_id=held))
    assert published.of(held)[-1].diagnostics == []
    gate.release.set()
    assert publishing is not None
    await asyncio.wait_for(asyncio.gather(publishing, return_exceptions=True), WAIT)
    assert published.of(held)[-1].diagnostics == []
    assert not published.large.is_set()
    assert held not in server.documents.open_ids()


async def test_nothing_is_published_after_the_close(server: BatonServer, gate: RenderGate) -> None:
    _, published, held, _ = await _large_appended(server, gate)
    publishing = server.documents.publishing(held)
    server.documents.close()
    count = len(published.sent)
    gate.release.set()
    assert publishing is not None
    await asyncio.wait_for(asyncio.gather(publishing, return_exceptions=True), WAIT)
    assert len(published.sent) == count


async def test_a_rendering_already_made_is_published_at_once(
    server: BatonServer, gate: RenderGate
) -> None:
    call = Call(server)
    published = Published(server)
    held, _ = await _two_sessions(call)
    await sessions.append(call, p.AppendParams(session_id=held, messages=LARGE))
    await sessions.render(call, p.PageParams(session_id=held))  # the version's rendering
    gate.armed = True
    server.documents.publish(held)
    assert published.with_large(held)[-1] == server.documents.version(held)
    assert not gate.entered.is_set()  # nothing rendered again
