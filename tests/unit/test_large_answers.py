"""A large answer (the whole view of a long session: `get` or `render` without a page, what
a client opening the session asks) is dumped and encoded in a worker thread, a slice at a
time: on the event loop, a 100,000-message session's get held every other request 2.5 s
and its render 3.9 s. The text is what `json.dumps` of its wire form would be."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.dispatch import encoded
from baton.lsp.dispatch.writing import Encoded
from baton.lsp.features import sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server

ODD = 'quote " backslash \\ tab \t nul \x00 é ✓ 😀 \u2028 '


def _turns(n: int) -> list[p.MessageInput]:
    out = []
    for i in range(n):
        out.append(p.MessageInput(role="user", content=f"question {i} {ODD}"))
        out.append(p.MessageInput(role="assistant", content=f"answer {i}"))
    return out


async def _long_session(tmp_path: Path, turns: int) -> tuple[Call, str]:
    call = Call(create_server(BatonService(Settings.model_validate({"dataDir": str(tmp_path)}))))
    sid = (await sessions.create(call, p.CreateParams(title="long"))).session_id
    await sessions.append(call, p.AppendParams(session_id=sid, messages=_turns(turns)))
    return call, sid


async def test_a_large_answer_is_its_wire_form_as_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoded, "CHARS", 1_000)  # the document's text in several pieces
    call, sid = await _long_session(tmp_path, 600)
    view = await sessions.get(call, p.PageParams(session_id=sid))
    rendered = await sessions.render(call, p.PageParams(session_id=sid))

    for result in (view, rendered):
        assert encoded.large(result)
        assert encoded.encode(result).text() == json.dumps(result.wire())
    small = await sessions.get(call, p.PageParams(session_id=sid, limit=10))
    assert not encoded.large(small)


async def test_a_large_get_is_dumped_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call, sid = await _long_session(tmp_path, 600)
    dumped_on: list[int] = []
    original = p.SessionView.wire

    def wire(self: p.SessionView) -> dict[str, Any]:
        dumped_on.append(threading.get_ident())
        return original(self)

    monkeypatch.setattr(p.SessionView, "wire", wire)

    answer = await call.ls.routes.requests[p.SESSION_GET]({"sessionId": sid})

    assert isinstance(answer, Encoded) and len(json.loads(answer.text())["messages"]) == 1_200
    assert dumped_on and threading.get_ident() not in dumped_on


async def test_a_message_holding_a_long_text_is_dumped_in_pieces_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of a few messages, one of them holding a long text (a tool's output of
    hundreds of MB): its answer was dumped on the event loop, in one call over the text,
    the encoder's escaped copy and its buffer beside the session's own. It is made off
    the loop now, the long text a piece at a time, and the pieces are the JSON text
    `json.dumps` of the wire form makes, odd characters and all."""
    monkeypatch.setattr(encoded, "CHARS", 1_000)
    monkeypatch.setattr(encoded, "LONG_TOKENS", 100)
    call, sid = await _long_session(tmp_path, 2)
    long = p.MessageInput(role="user", content=[{"type": "text", "text": ODD * 400}])
    await sessions.append(call, p.AppendParams(session_id=sid, messages=[long]))

    view = await sessions.get(call, p.PageParams(session_id=sid))
    assert len(view.messages) == 5 and encoded.large(view)
    made = encoded.encode(view)
    assert made.text() == json.dumps(view.wire())
    assert max(map(len, made.pieces)) < 10_000  # the text's ~16K characters in pieces
    small = await sessions.get(call, p.PageParams(session_id=sid, limit=4))
    assert not encoded.large(small)

    answer = await call.ls.routes.requests[p.SESSION_GET]({"sessionId": sid})
    assert isinstance(answer, Encoded) and json.loads(answer.text()) == view.wire()
