"""Undo of a compaction whose span holds a message a later compaction summarized: a message
pinned beside the first summary (or kept beside it for its pinned tool-call partner), then
unpinned and summarized by a second one, stays inside the second while it stands (it is
not sent verbatim beside a summary that quotes it), and goes back once, where it came,
when the second is undone too."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conversations import reload
from test_compaction_properties import shared_estimator, small_window

from baton.core.compaction.automatic.microcompact import microcompact
from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import MicrocompactSettings

EVERY = [f"{r}{n}" for n in range(6) for r in "pa"]  # p0 a0 p1 a1 ... p5 a5


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, shared_estimator().count_message)
    yield sessions
    sessions.close()


def _turns(session: Session, tool_turn: int | None = None) -> None:
    """Six turns p0/a0 .. p5/a5; turn `tool_turn` calls a tool first (u, its result r)."""
    batch: list[MessageInput | Message] = []
    for n in range(6):
        batch.append(MessageInput(id=f"p{n}", role="user", content=f"prompt {n} " * 20))
        if n == tool_turn:
            call = ToolUseBlock(id="t1", name="Read", input={"file_path": "/src/f.py"})
            batch.append(Message(id=f"u{n}", role="assistant", content=[call]))
            done = ToolResultBlock(tool_use_id="t1", content="x = 1\n" * 20)
            batch.append(MessageInput(id=f"r{n}", role="user", content=[done]))
        batch.append(
            Message(id=f"a{n}", role="assistant", content=[TextBlock(text=f"answer {n} " * 20)])
        )
    session.append(batch)


def _compact(session: Session, first: str, last: str) -> str:
    ctx = CompactContext(
        small_window(), shared_estimator(), ExtractiveSummarizer(shared_estimator().count_text)
    )
    request = CompactRequest("range", pivot_message_id=first, end_message_id=last)
    return asyncio.run(compact(session, request, ctx)).boundary_id


def _pinned_then_summarized(session: Session, pinned: str, beside: list[str]) -> tuple[str, str]:
    """`pinned` stays verbatim beside the first summary (p1..p3), with `beside` (the ids
    kept with it); unpinned, the second summary (from the first of `beside` to p4)
    summarizes them."""
    session.set_pinned(pinned, True)
    first = _compact(session, "p1", "p3")
    assert [m for m in session.view if m in beside] == beside
    session.set_pinned(pinned, False)
    second = _compact(session, beside[0], "p4")
    assert set(beside) <= set(session.boundaries[second].summarized_ids)
    return first, second


def _summary(session: Session, boundary_id: str) -> str:
    summary_id = session.boundaries[boundary_id].summary_id
    assert summary_id is not None
    return summary_id


def _sent_twice(session: Session) -> set[str]:
    """The messages of the view that a summary of the view also summarized (through the
    summaries it stands for): the model would get them twice."""
    stands_for: dict[str, list[str]] = {}
    kept: dict[str, set[str]] = {}
    for boundary_id in session.active:
        boundary = session.boundaries[boundary_id]
        stands_for.update(boundary.stands_for)
        kept.update({mid: set(boundary.kept_ids) for mid in boundary.stands_for})
    summarized: set[str] = set()
    stack = [mid for mid in session.view if mid in stands_for]
    while stack:
        mid = stack.pop()
        for one in stands_for[mid]:
            if one not in kept[mid]:
                summarized.add(one)
                stack.extend([one] if one in stands_for else [])
    return summarized & set(session.view)


def _in_order(session: Session) -> bool:
    order = {mid: n for n, mid in enumerate(session.messages)}
    plain = [order[m] for m in session.view if session.messages[m].kind == "message"]
    return plain == sorted(plain)


def test_undoing_the_older_summary_leaves_the_message_inside_the_later_one(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session)
    first, second = _pinned_then_summarized(session, "p2", ["p2"])
    session.uncompact(first)
    assert "p2" not in session.view
    held = _summary(session, second)
    assert session.view == ["p0", "a0", "p1", "a1", "a2", "p3", held, "a4", "p5", "a5"]
    assert _sent_twice(session) == set()
    assert reload(session).view == session.view


def test_then_undoing_the_later_summary_puts_the_message_back_once_where_it_came(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session)
    first, second = _pinned_then_summarized(session, "p2", ["p2"])
    session.uncompact(first)
    assert "p2" not in session.view
    session.uncompact(second)
    assert session.view == EVERY
    assert reload(session).view == EVERY


def test_a_message_kept_beside_for_its_pinned_tool_call_partner_stays_inside_too(
    store: SessionStore,
) -> None:
    """r2 (a tool result) pinned keeps u2 (its call) beside the first summary; both are
    summarized by the second once r2 is unpinned."""
    session = store.create()
    _turns(session, tool_turn=2)
    first, second = _pinned_then_summarized(session, "r2", ["u2", "r2"])
    session.uncompact(first)
    assert not {"u2", "r2"} & set(session.view)
    assert _sent_twice(session) == set() and session.unpaired_tool_calls() == []
    session.uncompact(second)
    assert session.view == [*EVERY[:5], "u2", "r2", *EVERY[5:]]


def _kept_beside_then_cleared(session: Session) -> tuple[str, Boundary]:
    """r2 (a tool result) pinned beside the first summary (p1..p3), unpinned, then cleared
    by a microcompaction: the first summary's id and the microcompaction."""
    _turns(session, tool_turn=2)
    session.set_pinned("r2", True)
    first = _compact(session, "p1", "p3")
    session.set_pinned("r2", False)
    later = datetime.now(UTC) + timedelta(hours=2)
    cleared = microcompact(session, MicrocompactSettings(keep_recent=0), now=later)
    assert cleared is not None
    return first, cleared


@pytest.mark.parametrize("undo_copy_first", [False, True])
def test_a_result_kept_beside_then_microcompacted_goes_back_as_its_copy_in_its_place(
    store: SessionStore, undo_copy_first: bool
) -> None:
    """r2 pinned beside the first summary, unpinned, then cleared by a microcompaction:
    undoing the summary puts the cleared copy where r2 came, after its call (the undo was
    refused as breaking the API's rules, the copy left after the span), and undoing the
    microcompaction then brings r2 back there."""
    session = store.create()
    first, cleared = _kept_beside_then_cleared(session)
    copy = cleared.new_messages[0].id
    assert copy in session.view and "r2" not in session.view
    if undo_copy_first:
        session.uncompact(cleared.id)
    else:
        session.uncompact(first)
        assert session.view == [*EVERY[:5], "u2", copy, *EVERY[5:]]
        assert session.unpaired_tool_calls() == []
        assert reload(session).view == session.view
    session.uncompact(first if undo_copy_first else cleared.id)
    assert session.view == [*EVERY[:5], "u2", "r2", *EVERY[5:]]
    assert reload(session).view == session.view


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_every_undo_order_sends_nothing_twice_and_keeps_arrival_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    """A third summary stands for both: whatever the order of the undos, no message is
    in the view beside a summary that summarized it, and the view keeps arrival order."""
    session = store.create()
    _turns(session)
    first, second = _pinned_then_summarized(session, "p2", ["p2"])
    third = _compact(session, "p0", "a4")
    assert {_summary(session, first), _summary(session, second)} <= set(
        session.boundaries[third].summarized_ids
    )
    boundaries = [first, second, third]
    for n in perm:
        session.uncompact(boundaries[n])
        assert _sent_twice(session) == set(), (boundaries[n], session.view)
        assert _in_order(session), session.view
        assert reload(session).view == session.view
    assert session.view == EVERY


def test_a_summary_made_since_over_the_later_one_puts_the_message_back_where_it_came(
    store: SessionStore,
) -> None:
    """The first summary undone, a third one summarizes the turns before the second and
    the second: undoing the second (inside the third) puts the message where it came in
    what the third stands for, and undoing the third puts it there in the view."""
    session = store.create()
    _turns(session)
    first, second = _pinned_then_summarized(session, "p2", ["p2"])
    session.uncompact(first)
    third = _compact(session, "p1", "a4")
    assert _summary(session, second) in session.boundaries[third].summarized_ids
    session.uncompact(second)
    assert _sent_twice(session) == set()
    session.uncompact(third)
    assert session.view == EVERY
    assert reload(session).view == EVERY


def test_a_rewind_that_took_out_the_later_summary_brings_the_message_back_with_it(
    store: SessionStore,
) -> None:
    """The second summary rewound out (with what came after it), then the first undone:
    the message is not put back verbatim, the rewind's undo brings back the summary that
    holds it, and that summary's undo brings it back where it came."""
    session = store.create()
    _turns(session)
    first, second = _pinned_then_summarized(session, "p2", ["p2"])
    rewind = session.rewind(_summary(session, second))
    again = [
        MessageInput(id="p9", role="user", content="prompt again " * 20),
        Message(id="a9", role="assistant", content=[TextBlock(text="answer again " * 20)]),
    ]
    session.append(again)
    session.uncompact(first)
    assert session.view == ["p0", "a0", "p1", "a1", "a2", "p3", "p9", "a9"]
    session.uncompact(rewind.id)
    assert "p2" not in session.view and _sent_twice(session) == set()
    session.uncompact(second)
    assert session.view == [*EVERY, "p9", "a9"]
    assert reload(session).view == session.view


def test_a_summary_that_stands_for_the_message_without_summarizing_it_leaves_it_out(
    store: SessionStore,
) -> None:
    """A third summary summarized the first one but not p2, pinned beside it: once the
    first is undone inside it, the third stands for p2 too, yet its text does not hold p2.
    Undoing the second then puts p2 back (the third does not hold it), once."""
    session = store.create()
    _turns(session)
    session.set_pinned("p2", True)
    first = _compact(session, "p1", "p3")
    third = _compact(session, "p0", _summary(session, first))
    assert "p2" in session.view and "p2" not in session.boundaries[third].summarized_ids
    session.set_pinned("p2", False)
    second = _compact(session, "p2", "p4")
    session.uncompact(first)
    assert "p2" in session.boundaries[third].stands_for[_summary(session, third)]
    session.uncompact(second)
    assert session.view.count("p2") == 1 and _in_order(session), session.view
    assert _sent_twice(session) == set()
    session.uncompact(third)
    assert session.view == EVERY


def test_a_cleared_copy_a_later_summary_summarized_stays_inside_it(
    store: SessionStore,
) -> None:
    """r2 pinned beside the first summary, unpinned, cleared by a microcompaction, then its
    call and the cleared copy summarized by a second summary: undoing the first leaves the
    copy inside the second (it was put back for r2, which the second's text covers through
    the copy, leaving a result with no call before it), and undoing the second puts the call
    and the copy back after it, where r2 came."""
    session = store.create()
    first, cleared = _kept_beside_then_cleared(session)
    copy = cleared.new_messages[0].id
    second = _compact(session, "u2", copy)
    session.uncompact(first)
    assert not {"u2", "r2", copy} & set(session.view)
    assert _sent_twice(session) == set() and session.unpaired_tool_calls() == []
    assert reload(session).view == session.view
    session.uncompact(second)
    assert session.view == [*EVERY[:5], "u2", copy, *EVERY[5:]]
    session.uncompact(cleared.id)
    assert session.view == [*EVERY[:5], "u2", "r2", *EVERY[5:]]
