"""Chronology of the view across rewinds, range summaries with pinned messages beside them,
and undos (minimal reproductions of ufuzz seeds 5 and 23)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, MessageInput, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _turns(session: Session, *names: str) -> None:
    batch = []
    for n in names:
        batch.append(MessageInput(id=f"p{n}", role="user", content=f"prompt {n}"))
        batch.append(Message(id=f"a{n}", role="assistant", content=[TextBlock(text=f"answer {n}")]))
    session.append(batch)


def _summarize(session: Session, span: list[str], view_after: list[str]) -> str:
    """A summary standing for `span`; the view becomes `view_after` ("S" is the summary;
    ids of `span` also in it stayed verbatim beside it, as pinned ones do)."""
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary")])
    view = [summary.id if mid == "S" else mid for mid in view_after]
    session.commit_boundary(
        Boundary(
            direction="range",
            summary_id=summary.id,
            new_messages=[summary],
            stands_for={summary.id: span},
            summarized_ids=[mid for mid in span if mid not in view],
            kept_ids=[mid for mid in view if mid != summary.id],
            view_before=list(session.view),
            view_after=view,
        )
    )
    return summary.id


def _in_order(session: Session) -> bool:
    order = {mid: n for n, mid in enumerate(session.messages)}
    plain = [order[m] for m in session.view if session.messages[m].kind == "message"]
    return plain == sorted(plain)


def _undo_all(session: Session, order: list[str]) -> None:
    """Undo every boundary, trying them in `order`; a refused undo waits (it must name
    another one to undo first); the view keeps arrival order after every undo."""
    pending = list(order)
    while pending:
        for b in pending:
            try:
                session.uncompact(b)
            except InvalidParams as exc:
                assert "first" in str(exc)
                continue
            assert _in_order(session), (b, session.view)
            pending.remove(b)
            break
        else:
            raise AssertionError(f"every undo refused: {pending}")


@pytest.mark.parametrize("span", [["a1"], ["a1", "a3"]])
def test_seed5_summary_of_a_kept_pinned_message_after_turns_sent_since(
    store: SessionStore, span: list[str]
) -> None:
    """a1 (pinned) was kept by the rewind; a summary standing for it (and, here or not, for
    a3, sent since) sits after p3: the rewind's turns go back before p3, or the undo is
    refused."""
    session = store.create()
    _turns(session, "1", "2")
    rewind = session.rewind("p2")
    _turns(session, "3")
    outer_view = ["S", "a1"] if span == ["a1"] else ["S", "a1", "a3"]
    first = _summarize(session, ["p1", "a1", "p3", "a3"][: 4 if span == ["a1"] else 3], outer_view)
    _summarize(session, span, [first, "S", "a1"])
    session.uncompact(session.active[1])  # the first summary
    assert _in_order(session), session.view
    try:
        session.uncompact(rewind.id)
    except InvalidParams as exc:
        assert "first" in str(exc)
    assert _in_order(session), session.view
    _undo_all(session, list(session.active))
    assert session.view == ["p1", "a1", "p2", "a2", "p3", "a3"]


def test_seed23_inner_summary_undone_while_a_rewind_holds_the_outer_one(
    store: SessionStore,
) -> None:
    """p2 (pinned) stayed beside the inner summary and the outer one; a rewind took out the
    outer summary: undoing the inner one, the rewind, then the outer one keeps the order."""
    session = store.create()
    _turns(session, "1", "2", "3", "4")
    inner = _summarize(session, ["p2", "a2", "p3", "a3"], ["p1", "a1", "S", "p2", "p4", "a4"])
    outer = _summarize(session, ["p1", "a1", inner, "p2", "p4"], ["S", "p2", "a4"])
    rewind = session.rewind(outer)
    session.uncompact(session.active[0])  # the inner summary
    session.uncompact(rewind.id)
    session.uncompact(session.active[0])  # the outer one
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_seed23_every_undo_order_keeps_arrival_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    _turns(session, "1", "2", "3", "4")
    inner = _summarize(session, ["p2", "a2", "p3", "a3"], ["p1", "a1", "S", "p2", "p4", "a4"])
    outer = _summarize(session, ["p1", "a1", inner, "p2", "p4"], ["S", "p2", "a4"])
    session.rewind(outer)
    _undo_all(session, [session.active[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


def _pinned_beside_two_summaries(session: Session) -> list[str]:
    """p0 (pinned) stays beside a summary of the turns after it, p0..a5, then beside an
    outer one standing for that summary and p6; a rewind to p0 keeps the outer summary.
    The boundaries: inner, outer, rewind."""
    _turns(session, *"0123456")
    inner = _summarize(
        session, [f"{r}{n}" for n in "012345" for r in "pa"], ["S", "p0", "p6", "a6"]
    )
    _summarize(session, [inner, "p0", "p6"], ["S", "p0", "a6"])
    session.rewind("p0")
    return list(session.active)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_an_inner_summary_undone_inside_an_outer_one_a_rewind_kept_keeps_arrival_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    """The rewind took p0, beside the outer summary, and kept that summary, which holds the
    inner one's turns after p0 and p6 after them: undoing the inner summary leaves its turns
    inside the outer one, not with the rewind (whose undo would put them after p6)."""
    session = store.create()
    boundaries = _pinned_beside_two_summaries(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "0123456" for r in "pa"]


def _pinned_beside_two_summaries_in_the_view(session: Session) -> list[str]:
    """a1 and p2 (pinned) stay beside a summary of p1..p4, then beside a second one, of
    a1..a4, that holds a4; a rewind to p2 keeps both summaries. The boundaries: first,
    second, rewind."""
    _turns(session, *"1234")
    first = _summarize(session, ["p1", "a1", "p2", "a2", "p3", "a3", "p4"], ["S", "a1", "p2", "a4"])
    _summarize(session, ["a1", "p2", "a4"], [first, "S", "a1", "p2"])
    session.rewind("p2")
    return list(session.active)


def test_a_summary_undo_that_would_give_a_rewind_turns_older_than_some_it_kept_is_refused(
    store: SessionStore,
) -> None:
    """Undoing the first summary while the rewind stands would cut its span before p2 and
    give the rest (a2 p3 a3 p4) to the rewind, whose undo puts them after what it kept: the
    second summary, which holds a4, later than them. The undo names the rewind to undo
    first and writes nothing."""
    session = store.create()
    first, _, rewind = _pinned_beside_two_summaries_in_the_view(session)
    before = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match="undo that rewind first") as refused:
        session.uncompact(first)
    assert rewind in str(refused.value)
    assert session.transcript.path.read_bytes() == before and first in session.active


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_two_summaries_a_rewind_kept_beside_a_pinned_message_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _pinned_beside_two_summaries_in_the_view(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


def _rewound_summary_beside_nothing_it_stands_for(session: Session) -> list[str]:
    """A summary at the end of the view summarized p4 a4 and stands for a1 too, shown
    verbatim before it (pinned beside it); a rewind to p2 took the summary out with p2..a3
    and p5 a5, after an earlier summary of p1 the rewind kept. The boundaries: the earlier
    summary, the later one, the rewind."""
    _turns(session, *"12345")
    _summarize(session, ["p1"], ["S", "a1", "p2", "a2", "p3", "a3", "p4", "a4", "p5", "a5"])
    _summarize(session, ["a1", "p4", "a4"], [*session.view[:6], "S", "p5", "a5"])
    session.rewind("p2")
    return list(session.active)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_rewound_summary_goes_back_where_what_it_summarized_came(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    """Undoing the earlier summary while the rewind stands puts what the rewind holds in
    the order it came: the later summary where p4 came (what its text covers), not where a1
    came (pinned beside it, shown before p2), which put p4 a4 before p2 once it was undone."""
    session = store.create()
    boundaries = _rewound_summary_beside_nothing_it_stands_for(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "12345" for r in "pa"]


def _kept_beside_then_held_by_a_later_summary(session: Session) -> list[str]:
    """a1 (pinned) stays beside a summary of p2 a2; an outer summary stands for it, with
    p0 p1 and p3, a0 and a1 pinned beside it; unpinned, both go into a third summary. The
    boundaries: inner, outer, third."""
    _turns(session, *"0123")
    inner = _summarize(session, ["a1", "p2", "a2"], ["p0", "a0", "p1", "S", "a1", "p3", "a3"])
    outer = _summarize(session, ["p0", "a0", "p1", inner, "a1", "p3"], ["S", "a0", "a1", "a3"])
    _summarize(session, ["a0", "a1"], [outer, "S", "a3"])
    return list(session.active)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_message_held_by_a_later_summary_goes_back_before_a_summary_it_came_before(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    """Undoing the outer summary, then the third, puts a0 and a1 back among p0 p1, the
    inner summary and p3 where they came: a1, kept beside the inner summary, came before
    what that summary summarized (p2 a2), so it goes before it (it went after it, with a0,
    and stayed there once the inner one was undone)."""
    session = store.create()
    boundaries = _kept_beside_then_held_by_a_later_summary(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "0123" for r in "pa"]


def _rewound_summary_of_turns_from_before_and_after(session: Session) -> list[str]:
    """A summary of a1 and of p3 a3 stands after p2 a2 (a1, pinned, stayed beside an
    earlier summary, was unpinned and summarized with later turns); a rewind to p2 took it
    out with p2 a2 p4 a4, after a summary of p1 it kept. The boundaries: the summary of p1,
    the later one, the rewind."""
    _turns(session, *"1234")
    first = _summarize(session, ["p1"], ["S", "a1", "p2", "a2", "p3", "a3", "p4", "a4"])
    _summarize(session, ["a1", "p3", "a3"], [first, "p2", "a2", "S", "p4", "a4"])
    session.rewind("p2")
    return list(session.active)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_rewound_summary_of_turns_before_and_after_keeps_its_place_among_them(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    """Undoing the summary of p1 while the rewind stands keeps what the rewind holds in
    its order: the later summary after a2, where the view had it (its undo puts a1 back
    before p2 and p3 a3 after a2), not first, where a1 came (p3 a3 then came back before
    p2)."""
    session = store.create()
    boundaries = _rewound_summary_of_turns_from_before_and_after(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_summary_a_rewind_kept_is_not_undone_inside_a_later_one(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    """p1 (pinned) stays beside a summary of p0..a2; a rewind to p1 keeps the summary, and
    a later one summarizes it. Undoing the first summary while the later one stands is
    refused, naming it: cut before p1, with a1 p2 a2 given to the rewind, the span came
    back on the rewind's undo beside the summary that quotes it; left whole inside that
    summary, it would hold p1, which the rewind holds too."""
    session = store.create()
    _turns(session, *"0123")
    inner = _summarize(session, [f"{r}{n}" for n in "012" for r in "pa"], ["S", "p1", "p3", "a3"])
    session.rewind("p1")
    outer = _summarize(session, [inner], ["S"])
    boundaries = list(session.active)
    pending = [boundaries[i] for i in perm]
    while pending:
        for b in pending:
            try:
                session.uncompact(b)
            except InvalidParams as exc:
                assert "first" in str(exc)
                assert b != boundaries[0] or boundaries[2] in str(exc)
                continue
            pending.remove(b)
            break
        else:
            raise AssertionError(f"every undo refused: {pending}")
        if outer in session.view:
            assert session.view[1:] in ([], ["p1", "p3", "a3"]), session.view
    assert session.view == [f"{r}{n}" for n in "0123" for r in "pa"]
