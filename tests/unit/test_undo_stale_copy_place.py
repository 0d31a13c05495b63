"""Undoing a summary whose span starts with a restored file, a stale copy that came back in
place of its fresh copy when the fresh copy's compaction was undone (both summaries held
inside later ones then): the file goes back where it stood, after the summary it was
restored with, not where the fresh copy was written, between a prompt and its reply; an
older rewind that kept it can be undone after (a compaction walk's seed, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns
from test_unrewind_fresh_copy import _commit, _restored

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _summary(text: str) -> Message:
    return Message(role="user", kind="summary", content=[TextBlock(text=text)])


def test_a_stale_copy_goes_back_after_its_summary_not_in_its_fresh_copys_place(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, "0")
    first, stale = _summary("summary of p0"), _restored("Restored file: open.py\nx = 1")
    restored_with = _commit(
        session, {first.id: ["p0"], stale.id: []}, [first.id, stale.id, "a0"], first, stale
    )
    _turns(session, "1", "2")
    rewind = session.rewind("p2").id
    _turns(session, "3", "4")
    # everything up to p4 summarized, a fresh copy of the file between p4 and its reply
    second, fresh = _summary("summary up to p4"), _restored("Restored file: open.py\nx = 2")
    span = [first.id, stale.id, "a0", "p1", "a1", "p3", "a3", "p4"]
    copied = _commit(
        session, {second.id: span, fresh.id: [stale.id]}, [second.id, fresh.id, "a4"], second, fresh
    )
    _turns(session, "5")
    third, again = _summary("summary from the copy"), _restored("Restored file: open.py\nx = 3")
    tail = [fresh.id, "a4", "p5", "a5"]
    latest = _commit(
        session, {third.id: tail, again.id: []}, [second.id, third.id, again.id], third, again
    )
    outer = _summarize(session, [second.id], ["S", third.id, again.id])
    holding = session.active[-1]

    session.uncompact(copied)
    session.uncompact(holding)
    assert outer not in session.view
    session.uncompact(latest)

    turns = ["p3", "a3", "p4", "a4", "p5", "a5"]
    assert session.view == [first.id, stale.id, "a0", "p1", "a1", *turns]
    assert invariant_violations(session.view_messages()) == []
    session.uncompact(rewind)
    session.uncompact(restored_with)
    assert session.view == [f"{k}{n}" for n in range(6) for k in "pa"]
    assert reload(session).view == session.view
