"""Undoing a summary that holds a message from before a restored file (one pinned beside an
older summary, then summarized with later turns) puts it back where it came, past the
file, among the turns before it: not after the file, behind turns that came after it (a
compaction walk's seed, reduced)."""

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


def test_a_message_held_by_a_later_summary_goes_back_before_a_restored_file(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, "0", "1")
    first, restored = _summary("summary of p0"), _restored("Restored file: open.py\nx = 1")
    # a whole compaction, a0 pinned beside it, the file restored after the last turn kept
    whole = _commit(
        session,
        {first.id: ["p0", "a0"], restored.id: []},
        [first.id, "a0", "p1", "a1", restored.id],
        first,
        restored,
    )
    _turns(session, "2")
    span = [first.id, "a0", "p1", "a1", restored.id, "p2"]
    middle = _summarize(session, span, ["S", "a0", "a2"])
    ranged = session.active[-1]
    last, again = _summary("summary from a0"), _restored("Restored file: open.py\nx = 1")
    _commit(
        session, {last.id: ["a0", "a2"], again.id: []}, [middle, last.id, again.id], last, again
    )
    latest = session.active[-1]
    session.uncompact(ranged)
    assert session.view == [first.id, "p1", "a1", restored.id, "p2", last.id, again.id]

    session.uncompact(latest)

    assert session.view == [first.id, "a0", "p1", "a1", restored.id, "p2", "a2"]
    assert invariant_violations(session.view_messages()) == []
    session.uncompact(whole)
    assert session.view == [f"{k}{n}" for n in range(3) for k in "pa"]
    assert reload(session).view == session.view
