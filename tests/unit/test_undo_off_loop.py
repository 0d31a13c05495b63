"""An undo's check (the view it gives, seconds of work on a session of 100,000 messages)
runs in the session's lane, off the event loop, and is not made again on the loop: while
it is held there, another session's requests are answered. Should the session change
meanwhile, the undo is checked again where it commits. Checked by ordering and counts."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.core.conversation import undo_check
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import compaction, sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server

WAIT = 20.0  # an upper bound, never a pause


class Gate:
    """Holds each undo check (in whatever thread it runs) until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: list[int] = []

    async def wait_entered(self) -> bool:
        return await asyncio.to_thread(self.entered.wait, WAIT)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    original = undo_check.kept_later

    def kept_later(*args: Any) -> Any:
        held.threads.append(threading.get_ident())
        held.entered.set()
        held.release.wait(WAIT)  # bounded: on the event loop this would hold everything
        return original(*args)

    monkeypatch.setattr(undo_check, "kept_later", kept_later)
    yield held
    held.release.set()


def _turns(n: int) -> list[p.MessageInput]:
    out = []
    for i in range(n):
        out.append(p.MessageInput(role="user", content=f"question {i} about the code"))
        out.append(p.MessageInput(role="assistant", content=f"answer {i} with the details"))
    return out


async def _compacted(call: Call, title: str) -> tuple[str, list[str]]:
    sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
    await sessions.append(call, p.AppendParams(session_id=sid, messages=_turns(8)))
    before = list(call.service.session(sid).view)
    params = p.CompactParams(session_id=sid, direction="up_to", pivot_message_id=before[-3])
    await compaction.compact(call, params)
    return sid, before


@pytest.fixture
def call(tmp_path: Path) -> Call:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    return Call(create_server(BatonService(settings)))


async def test_other_sessions_are_answered_while_an_undo_is_checked(call: Call, gate: Gate) -> None:
    held, before = await _compacted(call, "held")
    other = (await sessions.create(call, p.CreateParams(title="other"))).session_id
    await sessions.append(call, p.AppendParams(session_id=other, messages=_turns(2)))
    undoing = asyncio.ensure_future(compaction.uncompact(call, p.UncompactParams(session_id=held)))
    assert await gate.wait_entered()
    assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
    appended = await sessions.append(call, p.AppendParams(session_id=other, messages=_turns(1)))
    view = await sessions.get(call, p.PageParams(session_id=other))
    assert not undoing.done()
    assert len(appended.message_ids) == 2 and len(view.messages) == 6
    gate.release.set()
    await asyncio.wait_for(undoing, WAIT)
    assert call.service.session(held).view == before
    assert len(gate.threads) == 1  # not checked again on the loop


async def test_an_undo_of_a_session_changed_while_it_was_checked_is_checked_again(
    call: Call, gate: Gate
) -> None:
    held, before = await _compacted(call, "held")
    undoing = asyncio.ensure_future(compaction.uncompact(call, p.UncompactParams(session_id=held)))
    assert await gate.wait_entered()
    appended = await sessions.append(call, p.AppendParams(session_id=held, messages=_turns(1)))
    gate.release.set()
    await asyncio.wait_for(undoing, WAIT)
    assert call.service.session(held).view == [*before, *appended.message_ids]
    assert len(gate.threads) == 2  # once in the lane, once again on the loop
    assert gate.threads[1] == threading.get_ident()
