"""Undo of a summary a rewind took out, where the summary's span and what the rewinds hold
meet: each test a compaction walk's seed with an open editor file, reduced."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _call_turn(session: Session) -> None:
    """Turn 0: p0, a tool call u0, its result r0, the answer a0."""
    call = ToolUseBlock(id="t0", name="Read", input={"file_path": "/f.py"})
    session.append(
        [
            MessageInput(id="p0", role="user", content="prompt 0"),
            Message(id="u0", role="assistant", content=[call]),
            MessageInput(id="r0", role="user", content=[ToolResultBlock(tool_use_id="t0")]),
            Message(id="a0", role="assistant", content=[TextBlock(text="answer 0")]),
        ]
    )


def test_a_message_the_rewind_kept_goes_back_into_the_view(store: SessionStore) -> None:
    """Undo of a summary a rewind took out, whose span holds a message the rewind kept:
    a tool call pinned beside an older summary, summarized since by this one and left
    inside it when the older summary was undone, goes back into the view where it came,
    among the turns the rewind kept, not to the rewind, whose undo would put it after
    them."""
    came = ["p0", "u0", "r0", "a0", "p1", "a1", "p2", "a2", "p3", "a3"]
    session = store.create()
    _call_turn(session)
    _turns(session, "1", "2")
    # the first summary stands for turn 0's call, kept verbatim beside it (pinned), and a0
    first = _summarize(session, came[1:4], ["p0", "S", *came[1:3], *came[4:8]])
    undo_first = session.active[-1]
    older = session.rewind("p1").id
    _turns(session, "3")
    second = _summarize(session, ["u0", "r0", "p3", "a3"], ["p0", first, "S"])
    undo_second = session.active[-1]
    session.uncompact(older)  # p1 .. a2 back between the two summaries
    assert session.view == ["p0", first, "p1", "a1", "p2", "a2", second]
    rewind = session.rewind("p2").id  # keeps the first summary (and the call), takes the second
    session.uncompact(undo_first)
    assert session.view == ["p0", "a0", "p1", "a1"]  # the call stays inside the second summary

    session.uncompact(undo_second)

    assert session.view == came[:6]
    assert session.boundaries[rewind].summarized_ids == ["p2", "a2", "p3", "a3"]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    session.uncompact(rewind)
    assert session.view == came


def test_a_call_from_before_the_rewind_goes_back_into_the_view(store: SessionStore) -> None:
    """Undo of a summary a rewind took out, whose span holds a message that came before
    the message the rewind was to: a tool call pinned beside an older summary,
    summarized since by a later one and left inside it when the older summary was
    undone, all before a rewind that kept the turn around the call and took the later
    summary out. The call goes back into the view where it came, among the turns the
    rewind kept, not to the rewind, whose undo would put it after them."""
    came = ["p0", "u0", "r0", "a0", "p1", "a1", "p2", "a2", "p3", "a3", "p4", "a4", "p5", "a5"]
    session = store.create()
    _call_turn(session)
    _turns(session, "1", "2", "3")
    # the older summary stands for turn 0's call, kept verbatim beside it (pinned), a0 .. p2
    older = _summarize(session, came[1:7], ["p0", "S", "u0", "r0", "a2", "p3", "a3"])
    undo_older = session.active[-1]
    later = _summarize(session, ["u0", "r0", "a2", "p3"], ["p0", older, "S", "a3"])
    undo_later = session.active[-1]
    _turns(session, "4")
    session.uncompact(undo_older)  # the call stays inside the later summary
    assert session.view == ["p0", "a0", "p1", "a1", "p2", later, "a3", "p4", "a4"]
    rewind = session.rewind("p1").id  # keeps p0 a0, takes the later summary
    _turns(session, "5")

    session.uncompact(undo_later)

    assert session.view == ["p0", "u0", "r0", "a0", "p5", "a5"]
    assert session.boundaries[rewind].summarized_ids == came[4:12]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    session.uncompact(rewind)
    assert session.view == came


def test_a_pinned_prompt_the_rewind_holds_goes_back_where_it_came(store: SessionStore) -> None:
    """Undo of a summary a rewind took out, with a message pinned beside it that the
    rewind took too: a prompt pinned beside an older summary, then beside a later one
    (of the turn after it), both taken out by a rewind that kept the older summary. Once
    the older summary is undone, the rewind holds the prompt after the later summary,
    where that summary laid it out; the later summary's undo puts the prompt back where
    it came, among the turns the rewind got from the older one, not after them beside
    the turn summarized with it."""
    came = ["p0", "a0", "p1", "a1", "p2", "a2", "p3", "a3", "p4", "a4", "p5", "a5"]
    session = store.create()
    _turns(session, "0", "1", "2", "3")
    older = _summarize(session, came[:6], ["S", "p0", "p2", "p3", "a3"])  # p0, p2 pinned
    undo_older = session.active[-1]
    later = _summarize(session, ["p2", "p3"], [older, "p0", "S", "p2", "a3"])  # p2 pinned
    undo_later = session.active[-1]
    _turns(session, "4")
    rewind = session.rewind("p0").id  # keeps the older summary, takes the later one and p2
    _turns(session, "5")
    session.uncompact(undo_older)
    held = ["p0", "a0", "p1", "a1", "a2", later, "p2", "a3", "p4", "a4"]
    assert session.boundaries[rewind].summarized_ids == held

    session.uncompact(undo_later)

    assert session.boundaries[rewind].summarized_ids == came[:10]
    session.uncompact(rewind)
    assert session.view == came
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view


def test_the_rest_of_a_span_goes_to_the_rewind_it_came_after(store: SessionStore) -> None:
    """Undo of a summary whose span two rewinds cut, held inside a summary the older
    rewind took: what follows the later rewind's message goes to it up to the older
    rewind's message; what follows that stays inside the summary the older rewind holds,
    as it came after the message it rewound to. Given to the later rewind, its undo
    brought back a summary of turns the older rewind still held, without the turns
    before them (the walk's undos, latest first, were refused at the end)."""
    came = [f"{r}{n}" for n in range(8) for r in "pa"]  # p0 a0 p1 a1 ... p7 a7
    session = store.create()
    _turns(session, *"01234")
    later = _summarize(session, ["p3", "a3"], [*came[:6], "S", "p4", "a4"])
    # the span: p1 a1 p2 a2 verbatim before its summary (pinned), and the summary of p3 a3
    span = _summarize(session, [*came[2:6], later], [*came[:6], "S", "p4", "a4"])
    undone = session.active[-1]
    holder = _summarize(session, [span], [*came[:6], "S", "p4", "a4"])
    older = session.rewind("p2").id  # takes p2 a2 and the summary holding the span
    _turns(session, "5")
    session.rewind("p5")
    _turns(session, "6")
    mixed = _summarize(session, ["a1", "p6", "a6"], ["p0", "a0", "p1", "S"])
    undo_mixed = session.active[-1]
    rewind = session.rewind("p1").id  # takes p1 and the summary of a1 p6 a6
    _turns(session, "7")

    session.uncompact(undone)

    # p3 a3 (their summary) came after p2: they stay inside what the older rewind holds
    assert session.boundaries[rewind].summarized_ids == ["p1", mixed]
    assert session.active_stands_for()[holder] == ["p2", "a2", later]
    assert session.boundaries[older].summarized_ids == ["p2", "a2", holder, "p4", "a4"]
    session.uncompact(undo_mixed)
    session.uncompact(rewind)  # gives back what it took, not turns the older one holds
    assert session.view == ["p0", "a0", "p1", "a1", "p6", "a6", "p7", "a7"]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    while session.active:
        session.uncompact(session.active[-1])
    assert session.view == came
