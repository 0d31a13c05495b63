"""A render of a long session makes what its document keeps (a piece a message) and the
answer's ranges (a range a message), in the session's lane. The cyclic collector walked
all of it, young, at each full collection the render's allocations set off, whichever
thread they fell in, holding the interpreter: beside the render of a 100,000-message
session another session's `baton/usage` waited 0.43-0.44 s at the 95th percentile (0.55-
0.61 s at worst). The render keeps the collector out, as a load does, and freezes what it
made before the collector is back on (a document of over 1,000 messages)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from baton import protocol as p
from baton.core import memory
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server
from baton.lsp.session_document.markdown import Piece

MESSAGES = 1_200  # past LONG_DOCUMENT


async def test_a_render_freezes_what_it_made_before_the_collector_is_back_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    call = Call(create_server(BatonService(settings)))
    sid = (await sessions.create(call, p.CreateParams(title="long"))).session_id
    turns = [
        p.MessageInput(role="user" if i % 2 == 0 else "assistant", content=f"message {i}")
        for i in range(MESSAGES)
    ]
    await sessions.append(call, p.AppendParams(session_id=sid, messages=turns))
    walked: list[tuple[int, int]] = []

    class Watched:
        def __getattr__(self, name: str) -> object:
            return getattr(gc, name)

        def enable(self) -> None:
            young = gc.get_objects()
            pieces = sum(1 for o in young if type(o) is Piece)
            ranges = sum(1 for o in young if type(o) is p.MessageRange)
            walked.append((pieces, ranges))
            gc.enable()

    monkeypatch.setattr(memory, "gc", Watched())
    rendered = await sessions.render(call, p.PageParams(session_id=sid))

    assert len(rendered.messages) == MESSAGES
    assert walked == [(0, 0)], f"{walked} pieces and ranges left for the collector to walk"
