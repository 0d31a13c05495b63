"""Undo of a summary whose span two rewinds cut, held inside a summary the older rewind
took: what follows the later rewind's message goes to it up to the older rewind's message;
what follows that stays inside the summary the older rewind holds, as it came after the
message it rewound to. Given to the later rewind, its undo brought back a summary of turns
the older rewind still held, without the turns before them (a compaction walk's seed with
an open editor file, reduced; the walk's undos, latest first, were refused at the end)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.store import SessionStore

CAME = [f"{r}{n}" for n in range(8) for r in "pa"]  # p0 a0 p1 a1 ... p7 a7


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_the_rest_of_a_span_goes_to_the_rewind_it_came_after(store: SessionStore) -> None:
    session = store.create()
    _turns(session, *"01234")
    later = _summarize(session, ["p3", "a3"], [*CAME[:6], "S", "p4", "a4"])
    # the span: p1 a1 p2 a2 verbatim before its summary (pinned), and the summary of p3 a3
    span = _summarize(session, [*CAME[2:6], later], [*CAME[:6], "S", "p4", "a4"])
    undone = session.active[-1]
    holder = _summarize(session, [span], [*CAME[:6], "S", "p4", "a4"])
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
    assert session.view == CAME
