"""A cancelled undo of a compaction deep in a chain stops its check at its next step: the
check of what the undos still ahead would give (`undo_ahead`) undoes every summary that
holds the target, twice, each undo a walk of the whole chain (minutes on a long imported
session, in the session's lane), and the lane is free for the session's next request once
the cancel is answered. Checked by counting the steps taken, never by timings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_off_loop import WAIT
from test_off_loop import Gate as Held
from test_undo_off_loop import _compact, _long_session, _undo

from baton.core.conversation import undo_ahead
from baton.core.service import undos
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features.common import Call
from baton.lsp.server import create_server


class Gate(Held):
    """A `Gate` that also keeps the stop each check of an undo was given."""

    def __init__(self) -> None:
        super().__init__()
        self.stops: list[threading.Event] = []


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Gate, list[str]]]:
    """Holds the first undo the check of the undos ahead simulates; counts them all."""
    held, made = Gate(), []
    original = undo_ahead.undo_compaction
    checking = undos._checked_watched

    def watched(session: Any, target: str, told: Any, stop: threading.Event) -> Any:
        held.stops.append(stop)  # what the undo's cancel sets
        return checking(session, target, told, stop)

    monkeypatch.setattr(undos, "_checked_watched", watched)

    def undo_compaction(view: list[str], boundary: Any, *args: Any, **kwargs: Any) -> list[str]:
        made.append(boundary.id)
        if len(made) == 1:
            held.hold()
        return original(view, boundary, *args, **kwargs)

    monkeypatch.setattr(undo_ahead, "undo_compaction", undo_compaction)
    yield held, made
    held.release.set()


@pytest.fixture
def call(tmp_path: Path) -> Call:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    return Call(create_server(BatonService(settings)))


async def test_a_cancelled_undo_of_an_inner_compaction_stops_its_check(
    call: Call, steps: tuple[Gate, list[str]]
) -> None:
    gate, made = steps
    sid = _long_session(call, "chain")
    chain = [(await _compact(call, sid, f"m{n}")).boundary_id for n in (100, 200, 300, 400)]
    session = call.service.session(sid)
    assert session.active == chain
    view = list(session.view)
    undoing = _undo(call, sid, chain[0])  # held by the three after it
    assert await gate.wait_entered()
    undoing.cancel()
    # the cancel reaches the check (its stop set) before the step held is let go: a
    # thread let go first may take steps before the event loop delivers the cancel
    assert await asyncio.to_thread(gate.stops[0].wait, WAIT)
    gate.release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(undoing, WAIT)
    assert len(made) == 1  # not the five steps of the whole check
    assert session.active == chain and session.view == view
    made.clear()
    await asyncio.wait_for(_undo(call, sid), WAIT)  # the lane is free: the latest's undo
    assert session.active == chain[:-1]
