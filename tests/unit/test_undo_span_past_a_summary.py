"""Undoing a summary whose span holds turns from before and after another summary laid out
before it in the view: the turns that came before that summary go back before it, those it
stands for (pinned beside it) and the later ones after it (a compaction walk's seed with an
open editor file, reduced)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _in_order, _summarize, _turns, _undo_all

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore

CAME = [f"{r}{n}" for n in "012345" for r in "pa"]  # p0 a0 p1 a1 ... p5 a5


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _span_past_a_summary(session: Session) -> list[str]:
    """A summary of p0 a0; one of p1 .. a3 beside it, p2 a2 pinned; an outer one of both
    (the first and p2 a2 pinned); a range of the first summary, p2 a2 (pinned) and p4 a4.
    The boundaries, in the order made."""
    _turns(session, *"012345")
    first = _summarize(session, ["p0", "a0"], ["S", *CAME[2:]])
    middle = _summarize(session, CAME[2:8], [first, "S", "p2", "a2", *CAME[8:]])
    outer = _summarize(session, [first, middle, "p2", "a2"], ["S", first, "p2", "a2", *CAME[8:]])
    _summarize(session, [first, "p2", "a2", "p4", "a4"], [outer, "S", "p2", "a2", "p5", "a5"])
    return list(session.active)


def test_turns_from_before_a_summary_go_back_before_it(store: SessionStore) -> None:
    """The first summary and the outer one undone, the range stands for p0 a0 (which came
    before the middle summary, laid out before the range) and p2 a2, p4 a4 (after it starts).
    Its undo puts p0 a0 back before the middle summary, not after it: merged only up to
    that summary, which stands for p2 a2 kept verbatim beside it, p0 a0 went after it, and
    once it was undone too the view opened with p1 .. a3 before p0 a0."""
    session = store.create()
    first, middle, outer, summary_range = _span_past_a_summary(session)
    session.uncompact(first)
    session.uncompact(outer)
    middle_summary = session.boundaries[middle].summary_id
    assert session.view == [
        middle_summary,
        session.boundaries[summary_range].summary_id,
        "p2",
        "a2",
        "p5",
        "a5",
    ]

    session.uncompact(summary_range)

    assert session.view == ["p0", "a0", middle_summary, "p2", "a2", "p4", "a4", "p5", "a5"]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    session.uncompact(middle)
    assert session.view == CAME


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_every_undo_order_gives_back_the_turns_as_they_came(
    store: SessionStore, order: tuple[int, ...]
) -> None:
    """Whatever the order of the undos (one refused waits, naming the one to undo first),
    the view keeps the order the turns came at each step and ends as they came."""
    session = store.create()
    boundaries = _span_past_a_summary(session)
    _undo_all(session, [boundaries[n] for n in order])
    assert _in_order(session), session.view
    assert session.view == CAME
