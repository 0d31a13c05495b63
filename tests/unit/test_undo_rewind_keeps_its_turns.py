"""A rewind given the rest of a summary's span by that summary's undo keeps it across later
undos, while a summary that quotes those turns stands (a compaction walk's seed, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.store import SessionStore

TURNS = [f"{r}{n}" for n in "012345" for r in "pa"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_a_rewind_keeps_the_turns_an_undo_gave_it_when_another_undo_follows(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, *"0123")
    # T summarized p2 a2, the turns before them kept beside it
    held = ["p0", "a0", "p1", "a1"]
    older = _summarize(session, [*held, "p2", "a2"], ["S", *held, "p3", "a3"])
    # X summarized T and the turns after p0, which stayed beside it (pinned); T stands for
    # those turns too, so once X is undone inside Y, Y's text quotes turns the rewind holds
    quoted = _summarize(session, [older, *held], ["S", "p0", "p3", "a3"])
    undone = session.active[-1]
    rewind = session.rewind("p0").id
    _turns(session, "4")
    _summarize(session, [quoted, "p4"], ["S", "a4"])  # Y quotes X
    session.uncompact(undone)  # X: a0 p1 a1 go to the rewind
    assert session.boundaries[rewind].summarized_ids == ["p0", "a0", "p1", "a1", "p3", "a3"]
    _turns(session, "5")
    view = list(session.view)
    _summarize(session, ["p5", "a5"], [*view[:-2], "S"])

    session.uncompact(session.active[-1])  # a summary of none of them: they stay the rewind's

    assert session.view == view
    assert session.boundaries[rewind].summarized_ids == ["p0", "a0", "p1", "a1", "p3", "a3"]
    while session.active:
        session.uncompact(session.active[-1])
    assert session.view == TURNS
    assert reload(session).view == TURNS
