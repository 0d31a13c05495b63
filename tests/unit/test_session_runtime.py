"""Each session's runtime state has one owner: made when the service opens the session,
dropped with everything in it when the session is deleted or the store closes."""

from __future__ import annotations

import asyncio
import gc
import os
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import FunctionType, MethodType
from typing import Any

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.service.events import Event, SessionChanged, SessionClosed, SessionOpened
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.lsp.session_document.publisher import SessionDocuments
from baton_testkit.fake_anthropic import FakeAnthropic

SESSIONS = 1_000
API_KEY = "sk-ant-test-runtime-0123456789"
SESSION_ID = re.compile(r"s_[0-9a-f]{16}")


class FakeServer:
    """What the session documents read of the language server."""

    position_encoding = "utf-16"

    def __init__(self, service: BatonService) -> None:
        self.service = service
        self.published = 0

    def text_document_publish_diagnostics(self, params: Any) -> None:
        self.published += 1


def turn(n: int) -> list[MessageInput]:
    words = " ".join(f"w{n}x{j}" for j in range(60))
    return [
        MessageInput(role="user", content=f"question {n} {words}"),
        MessageInput(role="assistant", content=f"answer {n} {words}"),
    ]


def ids_reachable(*roots: object) -> dict[str, list[str]]:
    """Every session id found in a string reachable from `roots` (through containers,
    closures and Baton's own objects), with the first path to each."""
    found: dict[str, list[str]] = {}
    seen: set[int] = set()
    todo: deque[tuple[object, str]] = deque((root, type(root).__name__) for root in roots)
    while todo:
        obj, path = todo.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            for sid in SESSION_ID.findall(obj):
                found.setdefault(sid, []).append(path)
            continue
        for name, child in _children(obj):
            todo.append((child, f"{path}{name}"))
    return found


def _children(obj: object) -> Iterator[tuple[str, object]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield "{key}", key
            yield f"[{key!r}]", value
    elif isinstance(obj, list | tuple | set | frozenset | deque):
        yield from (("[]", item) for item in obj)
    elif isinstance(obj, MethodType):
        yield ".__self__", obj.__self__
    elif isinstance(obj, FunctionType):
        yield from ((".<cell>", cell.cell_contents) for cell in obj.__closure__ or ())
    elif type(obj).__module__.startswith("baton."):
        yield from ((f".{k}", v) for k, v in getattr(obj, "__dict__", {}).items())
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if hasattr(obj, slot):
                    yield f".{slot}", getattr(obj, slot)


async def settle(service: BatonService) -> None:
    """Let the background work the last change started (auto-compact, the summary
    written ahead) run to its end."""
    for n in range(5_000):  # a few loop turns, then up to 5 s (a request to the fake API)
        await asyncio.sleep(0 if n < 100 else 0.001)
        if not len(service.background):
            return
    raise AssertionError("background work did not finish")


@pytest.fixture
def service(
    tmp_path: Path,
    estimator: Estimator,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> BatonService:
    # fsync is what every transcript line costs; this test is about memory, not disks
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    settings = Settings.model_validate(
        {
            "dataDir": str(tmp_path / "data"),
            "summarizer": "extractive",
            "exactCounts": True,
            "contextWindow": 4_000,
            "autoCompact": {"thresholdPercent": 60, "backgroundPercent": 40},
        }
    )
    return BatonService(settings, api_key=API_KEY, estimator=estimator)


async def test_deleting_a_thousand_sessions_leaves_nothing_keyed_by_their_ids(
    service: BatonService,
) -> None:
    documents = SessionDocuments(FakeServer(service), service)  # type: ignore[arg-type]
    heard: dict[type, int] = {}

    def listen(event: Event) -> None:
        heard[type(event)] = heard.get(type(event), 0) + 1

    service.connect(listen)
    deleted: set[str] = set()
    for n in range(SESSIONS):
        sid = service.create(f"session {n}").session_id
        for k in range(4):  # past the start of the summary written ahead, then the threshold
            service.append(sid, turn(k))
            await settle(service)
        if n % 100 == 0:  # every change schedules an exact count; some get one at once
            assert await service.changes.count_exactly(sid)  # from the fake API
        runtime = service._runtimes.get(sid)
        assert runtime is not None
        auto_ran = bool(runtime.auto.failures or runtime.auto.last_auto)
        await service.compaction.compact(sid, CompactRequest(direction="all"))
        session = service.session(sid)
        if n == 0:  # the walk finds a live session's state wherever it is kept
            paths = ids_reachable(service)[sid]
            assert any(p.startswith("BatonService._runtimes._by_id") for p in paths)
            assert any(p.startswith("BatonService._runtimes._store._open") for p in paths)
            assert any(
                p.startswith("SessionDocuments._documents") for p in ids_reachable(documents)[sid]
            )
            assert auto_ran
            assert runtime.exact.figure is not None and runtime.usage.usages
            assert any(b.trigger == "auto" for b in session.boundaries.values())
            assert any(b.trigger == "manual" for b in session.boundaries.values())
        service.delete(sid)
        deleted.add(sid)
    del session, runtime  # the test's own references to the last one

    assert heard[SessionOpened] == heard[SessionClosed] == SESSIONS
    assert heard[SessionChanged] >= SESSIONS * 6
    left = {sid: paths for sid, paths in ids_reachable(service, documents).items()}
    assert not set(left) & deleted, {sid: left[sid][:3] for sid in set(left) & deleted}
    assert service.open_session_ids() == [] and documents.open_ids() == []
    alive = await sessions_alive(deleted)
    if alive:  # what holds it, besides this list (the message in full: a list is cut short)
        kept = alive[0]
        alive.clear()
        shown = "\n".join(holders(kept))
        raise AssertionError(f"a deleted session stays in memory, held by:\n{shown}")
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert pending == []
    await service.close()


def holders(item: object, depth: int = 5) -> list[str]:
    """What holds `item`, a few steps out: the failure says where a session is kept."""
    seen, out = {id(item)}, []
    frontier = [(item, 0)]
    while frontier:
        held, level = frontier.pop(0)
        for holder in gc.get_referrers(held):
            if id(holder) in seen or level >= depth or type(holder).__name__ == "frame":
                continue
            seen.add(id(holder))
            shown = ",".join(map(str, list(holder)[:6])) if isinstance(holder, dict) else ""
            out.append(f"{'  ' * level}{type(holder).__name__} {shown or repr(holder)[:120]}")
            frontier.append((holder, level + 1))
    return out[:60]


async def sessions_alive(ids: set[str], patience: float = 60.0) -> list[Session]:
    """The sessions of `ids` still in memory once the loop and the worker threads have let
    go of them: the loop's last callbacks and a compaction's worker thread may hold one for
    a moment after their answer arrived, so this asks again (at most `patience` seconds)
    before it says any is left (a loaded machine can take seconds: a leak stays for good)."""
    deadline = asyncio.get_running_loop().time() + patience
    while True:
        gc.collect()
        alive = [o for o in gc.get_objects() if isinstance(o, Session) and o.session_id in ids]
        if not alive or asyncio.get_running_loop().time() > deadline:
            return alive
        # this list must not be what keeps them: a session a thread held for a moment
        # stayed in it, found again at every look until the patience ran out
        del alive
        await asyncio.sleep(0.01)


async def test_closing_the_store_drops_every_runtime_and_document(
    service: BatonService, tmp_path: Path
) -> None:
    documents = SessionDocuments(FakeServer(service), service)  # type: ignore[arg-type]
    sids = [service.create().session_id for _ in range(3)]
    for sid in sids:
        service.append(sid, turn(0))
    await settle(service)
    assert set(documents.open_ids()) == set(sids) == set(service.open_session_ids())
    service.configure({"dataDir": str(tmp_path / "elsewhere")})
    assert service.open_session_ids() == [] and documents.open_ids() == []
    assert not set(ids_reachable(service, documents)) & set(sids)
    await service.close()


async def test_a_change_to_a_session_deleted_meanwhile_is_told_to_nobody(
    service: BatonService,
) -> None:
    documents = SessionDocuments(FakeServer(service), service)  # type: ignore[arg-type]
    sid = service.create().session_id
    runtime = service._runtimes.get(sid)  # what a turn still running holds
    assert runtime is not None
    service.delete(sid)
    heard: list[Event] = []
    service.connect(heard.append)
    service.changes.changed(runtime, "reply")  # the turn's last step, after the delete
    assert heard == [] and documents.open_ids() == []
    await service.close()
