"""A list of many sessions builds and encodes its answer without the cyclic collector:
what it makes holds no cycle and goes once answered, and each collection its number set
off walked it (and the heap) again."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.dispatch.writing import Encoded
from baton.lsp.server import BatonServer, create_server

SESSIONS = 2_000


def write_sessions(folder: Path, count: int) -> None:
    """`count` small transcripts as Baton writes them, and a few entries that are none."""
    folder.mkdir(parents=True)
    for n in range(count):
        sid = f"s_{n:016x}"
        header = {"type": "session", "format": 1, "sessionId": sid, "title": f"session {n}"}
        message = {"id": f"m{n}", "role": "user", "content": [{"type": "text", "text": "hi"}]}
        lines = [header, {"type": "message", "message": message}]
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    os.mkfifo(folder / "s_fifo.jsonl")
    (folder / "s_folder.jsonl").mkdir()
    (folder / "s_empty.jsonl").write_bytes(b"")


@pytest.fixture
def server(tmp_path: Path) -> BatonServer:
    write_sessions(tmp_path / "sessions", SESSIONS)
    return create_server(BatonService(Settings(data_dir=str(tmp_path))))


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations collected while the test runs, at the collector's usual thresholds."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    thresholds = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*thresholds)


@pytest.mark.timeout(120)
async def test_a_list_of_many_sessions_runs_no_collection_while_it_answers(
    server: BatonServer, collections: list[int]
) -> None:
    """Its summaries, wire models and encoding set the collector off dozens of times (a
    full walk of the heap among them, 0.1 s in a server): one young collection at most
    now, between the answer made and its encoding."""
    list_sessions = server.routes.requests[p.SESSION_LIST]
    await list_sessions({})  # the index built: what is measured is a list again
    gc.collect()
    collections.clear()

    answer = await list_sessions({})
    collected = list(collections)

    assert isinstance(answer, Encoded)
    assert len(json.loads(answer.text())["sessions"]) == SESSIONS + 3
    assert collected in ([], [0]), collected
