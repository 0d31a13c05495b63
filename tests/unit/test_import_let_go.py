"""A cancelled or failed import lets go of what it built in its own thread, with the
collector still out. It held all of it until the collector was back on: the first
collection then walked it, young (0.45-0.56 s for 100 MB of a 250 MB file read), and,
over the server, the exception handed to the loop kept it in a cycle that only a full
collection freed (1.7 s later, on the loop), holding every other session's requests."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Callable, Iterator, Sized
from pathlib import Path
from typing import Any

import pytest
from imports_cancelled import cancelled_midway, cancelled_once_written, left_in

from baton.core import memory
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers import claude_code
from baton.core.importers.claude_code import ImportCancelled
from baton.core.importers.claude_code_write import StagedTranscript
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.claude_code_gen import generate


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[weakref.ref[Message]]:
    """A reference, which keeps nothing alive, to each message the import writes."""
    refs: list[weakref.ref[Message]] = []
    emit = StagedTranscript._emit

    def noted(self: StagedTranscript, entries: list[Any], **kwargs: Any) -> None:
        refs.extend(weakref.ref(e) for e in entries if isinstance(e, Message))
        emit(self, entries, **kwargs)

    monkeypatch.setattr(StagedTranscript, "_emit", noted)
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 5)  # written before the cancel
    return refs


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No collection frees anything meanwhile: what is freed, refcounting freed."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def cancelled_after(shares: int, cancel: threading.Event) -> Any:
    seen: set[int] = set()

    def read(done: int, total: int) -> None:
        seen.add(done * 100 // max(total, 1))
        if len(seen) == shares:
            cancel.set()  # the next record stops the import

    return read


def test_a_cancelled_import_lets_go_of_what_it_built_before_the_collector_is_back_on(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch, written: Any
) -> None:
    path = generate(9, turns=60).write(tmp_path / "file.jsonl")
    alive_then: list[int] = []

    class Watched:
        def __getattr__(self, name: str) -> object:
            return getattr(gc, name)

        def enable(self) -> None:
            alive_then.append(sum(1 for ref in written if ref() is not None))
            gc.enable()

    monkeypatch.setattr(memory, "gc", Watched())
    cancel = threading.Event()
    with pytest.raises(ImportCancelled):
        claude_code.import_session(
            path, plain_store, progress=cancelled_after(20, cancel), cancel=cancel
        )

    assert written, "nothing was written before the cancel"
    assert alive_then == [0], f"{alive_then} messages left for the collector to walk"
    assert left_in(plain_store) == []


async def test_a_cancelled_import_off_the_loop_leaves_nothing_for_a_collection_to_free(
    tmp_path: Path,
    plain_store: SessionStore,
    monkeypatch: pytest.MonkeyPatch,
    written: Any,
    collector_off: None,
) -> None:
    path = generate(9, turns=60).write(tmp_path / "file.jsonl")
    seen = await cancelled_midway(path, plain_store, monkeypatch, 20)

    assert seen[-1] is not None and seen[-1] < 1.0  # it stopped before the end
    assert written
    alive = sum(1 for ref in written if ref() is not None)
    assert alive == 0, f"{alive} of {len(written)} messages wait for a full collection"
    assert left_in(plain_store) == []


# ---- let_go_of ---------------------------------------------------------------------------


class Items(list[Any]):
    """A list a weak reference can name (a held one would count as another holder)."""


class Freed:
    """Notes, as it is freed, how many items `within` still held then."""

    def __init__(self, log: list[int]) -> None:
        self.within: Callable[[], Sized | None] = lambda: None
        self.log = log

    def __del__(self) -> None:
        within = self.within()
        self.log.append(-1 if within is None else len(within))


class Holder:
    def __init__(self) -> None:
        self.items: list[Any] = []
        self.index: dict[str, Any] = {}
        self.ids: set[str] = set()
        self.inner: Holder | None = None
        self.bound: object = None

    def method(self) -> None:
        pass


def test_a_list_only_its_holder_held_is_freed_a_step_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory, "STEP", 100)
    holder, log = Holder(), []
    holder.items = Items(Freed(log) for _ in range(250))
    for item in holder.items:
        item.within = weakref.ref(holder.items)
    del item

    memory.let_go_of(holder)

    assert sorted(set(log), reverse=True) == [150, 50, 0]  # three steps, from its end
    assert len(log) == 250
    assert vars(holder) == {}


def test_what_another_holds_too_is_only_let_go_of() -> None:
    holder, log = Holder(), []
    shared = [Freed(log)]
    holder.items, holder.ids = shared, {"a", "b"}
    ids = holder.ids
    holder.inner = inner = Holder()
    inner.items = [1, 2]

    memory.let_go_of(holder)

    assert log == [] and len(shared) == 1  # the caller holds them: as they were
    assert ids == {"a", "b"} and inner.items == [1, 2]
    assert vars(holder) == {}


class Index(dict[str, Any]):
    """A dict a weak reference can name."""


def test_an_object_only_its_holder_held_is_let_go_of_the_same_way() -> None:
    holder, log = Holder(), []
    holder.inner = Holder()
    holder.inner.index = Index((str(n), Freed(log)) for n in range(3))
    for item in holder.inner.index.values():
        item.within = weakref.ref(holder.inner.index)
    del item
    inner = weakref.ref(holder.inner)

    memory.let_go_of(holder)

    assert log == [2, 1, 0]  # its dict emptied an item at a time
    assert inner() is None


def test_a_bound_method_held_is_let_go_of_its_function_left_as_it_is() -> None:
    holder = Holder()
    Holder.method.__dict__["note"] = "kept"  # type: ignore[attr-defined]
    holder.bound = Holder().method  # only `holder` holds it

    memory.let_go_of(holder)

    assert Holder.method.__dict__ == {"note": "kept"}  # type: ignore[attr-defined]


async def test_a_session_finished_as_the_cancel_came_is_freed_off_the_loop(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Freed on the loop, at once, a big one held it: 0.33 s for 250 MB of file."""
    path = generate(2).write(tmp_path / "file.jsonl")
    freed_in: list[threading.Thread] = []
    freed = threading.Event()

    def watched(session: Session) -> None:
        first = session.view_messages()[0]
        weakref.finalize(first, lambda: (freed_in.append(threading.current_thread()), freed.set()))

    await cancelled_once_written(path, plain_store, monkeypatch, watched)
    await asyncio.to_thread(freed.wait, 10)

    assert left_in(plain_store) == []
    assert freed_in and freed_in[0] is not threading.main_thread()


async def test_an_import_that_keeps_nothing_leaves_no_count_holding_its_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_off: None
) -> None:
    blocks: list[weakref.ref[Any]] = []  # what a message's count keeps: its content
    emit = StagedTranscript._emit

    def noted(self: StagedTranscript, entries: list[Any], **kwargs: Any) -> None:
        blocks.extend(weakref.ref(b) for e in entries if isinstance(e, Message) for b in e.content)
        emit(self, entries, **kwargs)

    monkeypatch.setattr(StagedTranscript, "_emit", noted)
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 5)  # written before it stops
    real = claude_code.import_session

    def stopped(*args: Any, cancel: Any = None, **kwargs: Any) -> Any:
        kwargs["progress"] = cancelled_after(20, cancel)
        return real(*args, cancel=cancel, **kwargs)

    monkeypatch.setattr(claude_code, "import_session", stopped)
    # the server's counter, which keeps each message's count (and content) by its id
    service = BatonService(Settings(data_dir=str(tmp_path / "data")), estimator=Estimator())
    path = generate(9, turns=60).write(tmp_path / "file.jsonl")
    with pytest.raises(ImportCancelled):
        await service.import_file(str(path))

    assert blocks, "nothing was written before it stopped"
    alive = sum(1 for ref in blocks if ref() is not None)
    assert alive == 0, f"{alive} of {len(blocks)} blocks held by their messages' counts"
    assert left_in(service.store) == []
