"""Undo of a summary a rewind took out, with a message pinned beside it that the rewind took
too: a prompt pinned beside an older summary, then beside a later one (of the turn after
it), both taken out by a rewind that kept the older summary. Once the older summary is
undone, the rewind holds the prompt after the later summary, where that summary laid it
out; the later summary's undo puts the prompt back where it came, among the turns the
rewind got from the older one, not after them beside the turn summarized with it (a
compaction walk's seed with an open editor file, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.store import SessionStore

CAME = ["p0", "a0", "p1", "a1", "p2", "a2", "p3", "a3", "p4", "a4", "p5", "a5"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_a_pinned_prompt_the_rewind_holds_goes_back_where_it_came(store: SessionStore) -> None:
    session = store.create()
    _turns(session, "0", "1", "2", "3")
    older = _summarize(session, CAME[:6], ["S", "p0", "p2", "p3", "a3"])  # p0, p2 pinned
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

    assert session.boundaries[rewind].summarized_ids == CAME[:10]
    session.uncompact(rewind)
    assert session.view == CAME
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
