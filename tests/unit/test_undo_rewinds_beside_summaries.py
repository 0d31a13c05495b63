"""Undos of summaries that stand beside a pinned message a rewind took out, while other
rewinds hold turns of their spans (minimal reproductions of the compaction walk's
seeds)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_undo_chronology import _summarize, _turns, _undo_all

from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore

TURNS = [f"{r}{n}" for n in "01234" for r in "pa"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _pinned_beside_summaries_two_rewinds_apart(session: Session) -> list[str]:
    """p1 and p2 (pinned) stay beside a summary of p0..p2; a rewind to p2 keeps it, p3 a3
    are sent and rewound, p4 a4 are sent; a later summary of the first one and p4 keeps p1
    beside it, and a rewind to p1 keeps the later summary. The boundaries: first, rewind
    to p2, rewind to p3, later, rewind to p1."""
    _turns(session, *"012")
    first = _summarize(session, ["p0", "a0", "p1", "a1", "p2"], ["S", "p1", "p2", "a2"])
    session.rewind("p2")
    _turns(session, "3")
    session.rewind("p3")
    _turns(session, "4")
    _summarize(session, [first, "p1", "p4"], ["S", "p1", "a4"])
    session.rewind("p1")
    return list(session.active)


def test_a_summary_undone_inside_a_later_one_leaves_out_what_an_older_rewind_took(
    store: SessionStore,
) -> None:
    """Undoing the first summary inside the later one keeps its span whole there but for
    p2, which the rewind to p2 took before the later summary was made (its text never
    covered it): left in, the rewind to p3 counted p2 among what it kept, and undoing
    everything latest first was refused at it, naming the rewind to p2."""
    session = store.create()
    first, *_ = _pinned_beside_summaries_two_rewinds_apart(session)
    session.uncompact(first)
    while session.active:
        session.uncompact(session.active[-1])
    assert session.view == TURNS


@pytest.mark.parametrize("perm", list(itertools.permutations(range(5))))
def test_two_rewinds_apart_beside_two_summaries_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _pinned_beside_summaries_two_rewinds_apart(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == TURNS
