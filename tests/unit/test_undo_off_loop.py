"""An undo of a long session's compaction is checked in the session's lane, off the event
loop: while its check is held there, every other session's requests are answered. It
keeps its place among the session's compactions and undos, and answers what the undo made
at once answers: a compaction asked after it compacts what it gave back, one asked before
it refuses it, a second undo of the latest undoes the one before, a rewind made meanwhile
is not the latest it undoes, a session changed meanwhile is checked again. Checked by
ordering and by which thread made the check, never by timings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_off_loop import WAIT, Gate

from baton import protocol as p
from baton.core.compaction.summary import extractive
from baton.core.conversation import undo_check, undo_summarized
from baton.core.conversation.messages import ApiUsage, Message, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.transcript import Transcript
from baton.core.errors import CompactionInProgress
from baton.core.service.service import BatonService
from baton.core.service.undos import OFF_LOOP_MESSAGES
from baton.core.settings import DEFAULT_MODEL, Settings
from baton.lsp.features import compaction, sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Holds each undo's check of a compaction (`kept_later` is one of its passes)."""
    held = Gate()
    original = undo_check.kept_later

    def kept_later(*args: Any) -> Any:
        held.hold()
        return original(*args)

    monkeypatch.setattr(undo_check, "kept_later", kept_later)
    yield held
    held.release.set()


@pytest.fixture
def summarizing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Holds the extractive summarizer of a compaction (it runs in the session's lane)."""
    held = Gate()
    original = extractive.Facts.gather.__func__  # type: ignore[attr-defined]

    def gather(cls: Any, *args: Any, **kwargs: Any) -> Any:
        held.hold()
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(extractive.Facts, "gather", classmethod(gather))
    yield held
    held.release.set()


@pytest.fixture
def call(tmp_path: Path) -> Call:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    return Call(create_server(BatonService(settings)))


def _long_session(call: Call, title: str) -> str:
    """A session of OFF_LOOP_MESSAGES messages, written as a transcript in the data dir
    (every 100th reply with the usage the API reported for it)."""
    sid = f"s_{title}"
    path = call.service.settings.resolved_data_dir() / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "format": 1, "sessionId": sid, "title": title}
    header |= {"model": DEFAULT_MODEL, "systemPrompt": "x", "createdAt": "2026-03-02T09:00:00Z"}
    roles = ("user", "assistant")
    with Transcript.create(path, header) as transcript:
        transcript.append_many(
            {
                "type": "message",
                "message": Message(
                    id=f"m{i}",
                    role=roles[i % 2],
                    content=[TextBlock(text=f"message {i} about the parser and its tests")],
                    tokens=12,  # counted as Baton stores them
                    usage=ApiUsage(input_tokens=40 + 12 * i, output_tokens=12)
                    if i % 100 == 99
                    else None,
                ).wire(),
            }
            for i in range(OFF_LOOP_MESSAGES)
        )
    return sid


async def _until(condition: Callable[[], bool]) -> bool:
    """Whether `condition` comes true while the loop runs what it has to run."""
    for _ in range(10_000):
        if condition():
            return True
        await asyncio.sleep(0)  # a turn of the loop, no pause
    return False


async def _compact(call: Call, sid: str, pivot: str) -> p.CompactResult:
    params = p.CompactParams(session_id=sid, direction="up_to", pivot_message_id=pivot)
    return await compaction.compact(call, params)


def _undo(call: Call, sid: str, boundary_id: str | None = None) -> asyncio.Future[Any]:
    params = p.UncompactParams(session_id=sid, boundary_id=boundary_id)
    return asyncio.ensure_future(compaction.uncompact(call, params))


async def test_other_sessions_are_answered_while_an_undo_is_checked(call: Call, gate: Gate) -> None:
    held = _long_session(call, "held")
    before = list(call.service.session(held).view)
    compacted = await _compact(call, held, "m100")
    other = (await sessions.create(call, p.CreateParams(title="other"))).session_id
    turns = [
        p.MessageInput(role="user", content="hi"),
        p.MessageInput(role="assistant", content="yo"),
    ]
    undoing = _undo(call, held)
    assert await gate.wait_entered()
    assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
    appended = await sessions.append(call, p.AppendParams(session_id=other, messages=turns))
    view = await sessions.get(call, p.PageParams(session_id=other))
    assert not undoing.done()
    assert len(appended.message_ids) == 2 and len(view.messages) == 2
    gate.release.set()
    await asyncio.wait_for(undoing, WAIT)
    session = call.service.session(held)
    assert session.view == before and compacted.boundary_id not in session.active
    assert len(gate.threads) == 1  # not checked again on the loop


async def test_a_compaction_asked_after_an_undo_compacts_what_it_gave_back(
    call: Call, gate: Gate
) -> None:
    held = _long_session(call, "held")
    first = await _compact(call, held, "m100")
    undoing = _undo(call, held)
    assert await gate.wait_entered()
    compacting = asyncio.ensure_future(_compact(call, held, "m50"))
    assert await _until(lambda: call.service.session(held).compacting)  # it holds the session
    assert not compacting.done() and not undoing.done()
    gate.release.set()
    undone = await asyncio.wait_for(undoing, WAIT)
    second = await asyncio.wait_for(compacting, WAIT)
    assert isinstance(undone, p.UncompactResult)
    # the second compaction planned on the view the undo gave back: the first one's turns
    assert second.summarized_message_ids == [f"m{i}" for i in range(51)]  # up to m50
    session = call.service.session(held)
    assert session.active == [second.boundary_id] and first.boundary_id not in session.active


async def test_an_undo_asked_while_a_compaction_runs_is_refused(
    call: Call, summarizing: Gate
) -> None:
    held = _long_session(call, "held")
    summarizing.release.set()
    first = await _compact(call, held, "m100")
    summarizing.release.clear()
    summarizing.entered.clear()
    compacting = asyncio.ensure_future(_compact(call, held, "m300"))
    assert await summarizing.wait_entered()
    with pytest.raises(CompactionInProgress):
        await _undo(call, held, first.boundary_id)
    summarizing.release.set()
    second = await asyncio.wait_for(compacting, WAIT)
    assert call.service.session(held).active == [first.boundary_id, second.boundary_id]


async def test_two_undos_of_the_latest_asked_together_undo_the_two_latest(
    call: Call, gate: Gate
) -> None:
    held = _long_session(call, "held")
    before = list(call.service.session(held).view)
    await _compact(call, held, "m100")
    await _compact(call, held, "m300")
    first, second = _undo(call, held), _undo(call, held)
    assert await gate.wait_entered()
    gate.release.set()
    await asyncio.wait_for(asyncio.gather(first, second), WAIT)
    session = call.service.session(held)
    assert session.active == [] and session.view == before


async def test_a_rewind_made_while_an_undo_is_checked_is_not_the_latest_it_undoes(
    call: Call, gate: Gate
) -> None:
    held = _long_session(call, "held")
    compacted = await _compact(call, held, "m100")
    undoing = _undo(call, held)
    assert await gate.wait_entered()
    rewind = p.RewindParams(session_id=held, message_id=f"m{OFF_LOOP_MESSAGES - 2}")
    rewound = await sessions.rewind(call, rewind)
    gate.release.set()
    await asyncio.wait_for(undoing, WAIT)
    session = call.service.session(held)
    assert session.active == [rewound.boundary_id] and compacted.boundary_id not in session.active
    assert session.view == [f"m{i}" for i in range(OFF_LOOP_MESSAGES - 2)]


async def test_an_undo_of_a_session_changed_while_it_was_checked_is_checked_again(
    call: Call, gate: Gate
) -> None:
    held = _long_session(call, "held")
    before = list(call.service.session(held).view)
    await _compact(call, held, "m100")
    undoing = _undo(call, held)
    assert await gate.wait_entered()
    turns = [p.MessageInput(role="user", content="and then?")]
    appended = await sessions.append(call, p.AppendParams(session_id=held, messages=turns))
    gate.release.set()
    await asyncio.wait_for(undoing, WAIT)
    assert call.service.session(held).view == [*before, *appended.message_ids]
    assert len(gate.threads) == 2  # checked again, in the lane too
    assert threading.get_ident() not in gate.threads


class Steps:
    """Holds each call it watches (in whatever thread it runs) until let through, one at
    a time."""

    def __init__(self) -> None:
        self.entered = threading.Semaphore(0)
        self.go = threading.Semaphore(0)
        self.threads: list[int] = []

    def hold(self) -> None:
        self.threads.append(threading.get_ident())
        self.entered.release()
        self.go.acquire(timeout=WAIT)  # bounded: on the event loop this holds everything

    async def wait_entered(self) -> bool:
        return await asyncio.to_thread(self.entered.acquire, True, WAIT)


async def test_a_session_that_changes_during_every_check_is_never_checked_on_the_loop(
    call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changed during each of its first four checks, the session is checked a fifth time in
    its lane (it was checked on the loop after three, every session waiting): other
    sessions are answered while that check runs."""
    steps = Steps()
    original = undo_check.kept_later

    def kept_later(*args: Any) -> Any:
        steps.hold()
        return original(*args)

    monkeypatch.setattr(undo_check, "kept_later", kept_later)
    held = _long_session(call, "held")
    before = list(call.service.session(held).view)
    await _compact(call, held, "m100")
    other = (await sessions.create(call, p.CreateParams(title="other"))).session_id
    undoing = _undo(call, held)
    appended: list[str] = []
    try:
        for n in range(4):
            assert await steps.wait_entered()
            turn = p.MessageInput(role=("user", "assistant")[n % 2], content=f"and then {n}?")
            params = p.AppendParams(session_id=held, messages=[turn])
            appended += (await sessions.append(call, params)).message_ids
            steps.go.release()
        assert await steps.wait_entered()  # the fifth check, the session unchanged since
        turns = [p.MessageInput(role="user", content="hi")]
        await sessions.append(call, p.AppendParams(session_id=other, messages=turns))
        view = await sessions.get(call, p.PageParams(session_id=other))
        assert len(view.messages) == 1 and not undoing.done()
    finally:
        for _ in range(8):
            steps.go.release()
    await asyncio.wait_for(undoing, WAIT)
    assert call.service.session(held).view == [*before, *appended]
    assert len(steps.threads) == 5 and threading.get_ident() not in steps.threads


async def test_an_undo_checked_off_the_loop_leaves_the_state_a_fresh_read_finds(call: Call) -> None:
    held = _long_session(call, "held")
    await _compact(call, held, "m100")
    await asyncio.wait_for(_undo(call, held), WAIT)
    session = call.service.session(held)
    fresh = Session(Transcript.open(session.transcript.path, writable=False), session.count)
    size = len(fresh.view)
    assert session.view == fresh.view and size == OFF_LOOP_MESSAGES
    assert session.anchor() == fresh.anchor() and fresh.anchor() is not None
    assert session.tokens_in_view(0, size) == fresh.tokens_in_view(0, size)
    assert session.tokens_by_kind() == fresh.tokens_by_kind()
    assert [session.unchanged_before(i) for i in range(size)] == [
        fresh.unchanged_before(i) for i in range(size)
    ]


async def test_an_undo_checked_off_the_loop_places_its_messages_there_only(
    call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk of every summary in force an undo places messages by (the whole of a long
    imported session, hundreds of compactions standing for each other) is made by its
    check, in the lane; its commit on the loop takes it as it is."""
    held = _long_session(call, "held")
    await _compact(call, held, "m100")
    walked: list[int] = []
    original = undo_summarized.Summarized.elsewhere

    def elsewhere(self: undo_summarized.Summarized, view: list[str]) -> set[str]:
        walked.append(threading.get_ident())
        return original(self, view)

    monkeypatch.setattr(undo_summarized.Summarized, "elsewhere", elsewhere)
    await asyncio.wait_for(_undo(call, held), WAIT)
    assert walked and threading.get_ident() not in walked
    assert call.service.session(held).view == [f"m{i}" for i in range(OFF_LOOP_MESSAGES)]
