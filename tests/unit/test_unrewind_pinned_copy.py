"""A rewind's undo among older turns another rewind's undo put back, one of them the cleared
copy of a tool result that the summary the rewind kept stands for too (pinned beside it):
the rewound turns go after that copy, not between the call and its result (a compaction
walk's seed with an open editor file, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns
from test_undo_rewind_spans import _call_turn

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, ToolResultBlock
from baton.core.conversation.store import SessionStore
from baton.core.conversation.unrewind import sent_since, unrewind


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_a_rewinds_turns_go_after_a_cleared_result_shown_beside_the_summary_it_kept() -> None:
    """The rewind kept summary S and took b1 b2; another rewind's undo put back, after S,
    p1, the call u3 and the cleared copy C of its result r3, all of which S stands for
    too. C counted for nothing there (what it stands for, r3, S places), so the rewound
    turns went between u3 and C."""
    arrival = ["p1", "u3", "r3", "C", "S", "b1", "b2", "later"]
    stands_for = {"S": ["p1", "u3", "r3", "C"], "C": ["r3"]}
    rewind = Boundary(direction="rewind", summarized_ids=["b1", "b2"], view_after=["S"])
    since = sent_since(arrival, arrival.index("later"))

    view = unrewind(["S", "p1", "u3", "C", "later"], rewind, stands_for, since, arrival)

    assert view == ["S", "p1", "u3", "C", "b1", "b2", "later"]


def test_a_rewinds_undo_leaves_no_call_unanswered(store: SessionStore) -> None:
    """Turn 0's result cleared (C), a summary of turns 0 and 1 with p0, the call and C
    pinned beside it, a rewind to p0 (keeping the summary), turn 2, a summary of that
    summary, a rewind to p2 (keeping it), turn 3, and the first rewind undone (p0, the
    call and C back after the outer summary). The second rewind's undo was refused: its
    turns went between the call and C, a call unanswered before the next prompt ("rewind
    them first", naming no step that would let it through). They go after C."""
    session = store.create()
    _call_turn(session)  # p0 u0 r0 a0
    _turns(session, "1")
    cleared = Message(id="C", role="user", content=[ToolResultBlock(tool_use_id="t0")])
    session.commit_boundary(
        Boundary(
            direction="microcompact",
            new_messages=[cleared],
            stands_for={"C": ["r0"]},
            summarized_ids=["r0"],
            kept_ids=[mid for mid in session.view if mid != "r0"],
            view_before=list(session.view),
            view_after=["p0", "u0", "C", "a0", "p1", "a1"],
        )
    )
    inner = _summarize(session, ["p0", "u0", "C", "a0", "p1", "a1"], ["S", "p0", "u0", "C"])
    first = session.rewind("p0").id
    _turns(session, "2")
    outer = _summarize(session, [inner], ["S", "p2", "a2"])
    second = session.rewind("p2").id
    _turns(session, "3")
    session.uncompact(first)
    assert session.view == [outer, "p0", "u0", "C", "p3", "a3"]

    session.uncompact(second)

    assert session.view == [outer, "p0", "u0", "C", "p2", "a2", "p3", "a3"]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    while session.active:
        session.uncompact(session.active[-1])
    assert session.view == ["p0", "u0", "r0", "a0", "p1", "a1", "p2", "a2", "p3", "a3"]
