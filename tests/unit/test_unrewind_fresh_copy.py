"""Undoing a rewind puts the turns it took back after a restored file it kept, when a
compaction since has put a fresh copy of that file in its place and a summary before it
stands for the file too (kept beside it): after the fresh copy, not before it (a compaction
walk's seed, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _restored(text: str) -> Message:
    return Message(role="user", kind="attachment", content=[TextBlock(text=text)])


def _commit(
    session: Session, stands_for: dict[str, list[str]], view_after: list[str], *new: Message
) -> str:
    """A compaction whose first new message is its summary; the boundary's id."""
    summary_id = new[0].id
    session.commit_boundary(
        Boundary(
            direction="range",
            summary_id=summary_id,
            new_messages=list(new),
            stands_for=stands_for,
            summarized_ids=[m for span in stands_for.values() for m in span if m not in view_after],
            kept_ids=[m for m in view_after if m not in stands_for],
            view_before=list(session.view),
            view_after=view_after,
        )
    )
    return session.active[-1]


def test_undoing_a_rewind_puts_its_turns_after_the_fresh_copy_of_a_file_it_kept(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, "0", "1")
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary of p0 a0")])
    stale = _restored("Restored file: open.py\nx = 1")
    _commit(
        session,
        {summary.id: ["p0", "a0"], stale.id: []},
        [summary.id, stale.id, "p1", "a1"],
        summary,
        stale,
    )
    # a later summary of it, the restored file kept beside it
    outer = _summarize(session, [summary.id, stale.id], ["S", stale.id, "p1", "a1"])
    before = list(session.view)
    rewind = session.rewind("p1").id
    _turns(session, "2")
    later = Message(role="user", kind="summary", content=[TextBlock(text="summary of p2")])
    fresh = _restored("Restored file: open.py\nx = 2")
    compaction = _commit(
        session,
        {later.id: ["p2"], fresh.id: [stale.id]},
        [outer, fresh.id, later.id, "a2"],
        later,
        fresh,
    )

    session.uncompact(rewind)

    assert session.view == [outer, fresh.id, "p1", "a1", later.id, "a2"]
    session.uncompact(compaction)
    assert session.view == [*before, "p2", "a2"]
    assert reload(session).view == session.view
