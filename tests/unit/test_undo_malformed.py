"""Undos on a malformed transcript (records edited by hand, or written by another tool)
answer: whatever the boundaries name, a check comes back with a view or a refusal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.store import SessionStore
from baton.core.conversation.undo_check import undo_refusal


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_a_microcompacted_copy_that_stands_for_itself_does_not_hold_an_undo_forever(
    store: SessionStore,
) -> None:
    """A copy C of a0 whose record says it replaced itself, pinned beside summary S1 and
    summarized later by S2: undoing S1 followed C to the copy in force of it, C, for ever
    (the check never returned, and the session's lane with it). C stays inside S2."""
    session = store.create()
    _turns(session, *"012")
    copy = Message(id="C", role="assistant", content=[TextBlock(text="[cleared]")])
    session.commit_boundary(
        Boundary(
            direction="microcompact",
            new_messages=[copy],
            stands_for={"C": ["C"]},
            view_before=list(session.view),
            view_after=["p0", "C", "p1", "a1", "p2", "a2"],
        )
    )
    first = _summarize(session, ["p0", "C"], ["S", "C", "p1", "a1", "p2", "a2"])
    later = _summarize(session, ["C", "p1", "a1"], [first, "S", "p2", "a2"])
    assert session.view == [first, later, "p2", "a2"]

    target = session.active[1]
    assert undo_refusal(session, target) is None
    session.uncompact(target)
    assert session.view == ["p0", later, "p2", "a2"]
