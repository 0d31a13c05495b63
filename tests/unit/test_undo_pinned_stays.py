"""Undoing a summary leaves a message kept verbatim beside it where it is in the view, when
turns that came before that message have come back between the summary and it since (an
older summary undone): the summary's turns go in its place, and the message, after the
turns it followed all along, is not pulled back to them, past a restored file (a compaction
walk's seed, reduced)."""

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


def test_a_message_kept_beside_a_summary_stays_after_the_turns_come_back_before_it(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, "0", "1", "2")
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary of a1")])
    restored = _restored("Restored file: open.py\nx = 1")
    first = _commit(
        session,
        {summary.id: ["a1"], restored.id: []},
        ["p0", "a0", "p1", summary.id, restored.id, "p2", "a2"],
        summary,
        restored,
    )
    # everything summarized, p1 pinned beside the summary
    span = ["p0", "a0", "p1", summary.id, restored.id, "p2", "a2"]
    older = _summarize(session, span, ["S", "p1"])
    second = session.active[-1]
    _turns(session, "3")
    # p1 summarized in turn, p3 pinned beside that summary
    later = _summarize(session, ["p1", "p3"], [older, "S", "p3", "a3"])
    session.uncompact(second)
    came_back = ["p0", "a0", later, summary.id, restored.id, "p2", "a2", "p3", "a3"]
    assert session.view == came_back

    session.uncompact(session.active[-1])

    assert session.view == ["p0", "a0", "p1", summary.id, restored.id, "p2", "a2", "p3", "a3"]
    assert invariant_violations(session.view_messages()) == []
    session.uncompact(first)
    assert session.view == [f"{k}{n}" for n in range(4) for k in "pa"]
    assert reload(session).view == session.view
