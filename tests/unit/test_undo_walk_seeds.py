"""Undos the compaction walk's seeds got wrong, each reduced to the few steps that showed
it: summaries beside pinned messages that rewinds took out, rewinds holding turns of a
summary's span, summaries of turns from before and after others, and a message pinned
beside a summary that a later one summarized."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_undo_chronology import _summarize, _turns, _undo_all

from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams

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


def _summary_after_the_message_it_stands_for_shown_before(session: Session) -> list[str]:
    """A summary of p3 a3 at the end of the view stands for p1 too, shown verbatim before
    it (pinned beside it); a rewind to p2 takes p2 a2 and the summary out, p4 a4 are sent
    and rewound. The boundaries: the summary, the rewind to p2, the rewind to p4."""
    _turns(session, *"123")
    _summarize(session, ["p1", "p3", "a3"], ["p1", "a1", "p2", "a2", "S"])
    session.rewind("p2")
    _turns(session, "4")
    session.rewind("p4")
    return list(session.active)


def test_a_rewinds_turns_go_back_after_a_summary_of_older_turns_another_one_put_back(
    store: SessionStore,
) -> None:
    """Undoing the rewind to p2, then the one to p4, puts p4 a4 back after the summary (its
    text covers p3 a3, older than p4) and keeps the summary after p2 a2: the summary went
    first, where p1 came, shown before it, and the turns it covers came back before p2."""
    session = store.create()
    summary, to_p2, to_p4 = _summary_after_the_message_it_stands_for_shown_before(session)
    session.uncompact(to_p2)
    session.uncompact(to_p4)
    assert session.view[:4] == ["p1", "a1", "p2", "a2"]
    assert session.view[5:] == ["p4", "a4"]
    session.uncompact(summary)
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_summary_beside_a_message_shown_before_it_and_two_rewinds_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _summary_after_the_message_it_stands_for_shown_before(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


def _summary_of_turns_before_and_after_others(session: Session) -> list[str]:
    """p2 a2 (pinned) stay beside a summary of p1..a3; a rewind to p2 takes them, p4 a4
    are sent, and its undo puts them back before p4. A second summary of p2 a2 and p4
    stands after a3 once the first is undone: its text covers turns from before p3 and
    after a3. A rewind to p3 takes p3..a4, p5 a5 are sent and rewound, and the rewind to p3
    is undone. The boundaries: the second summary, the rewind to p5."""
    _turns(session, *"123")
    first = _summarize(session, ["a1", "p2", "a2", "p3", "a3"], ["p1", "S", "p2", "a2"])
    session.uncompact(session.rewind("p2").id)
    _turns(session, "4")
    _summarize(session, ["p2", "a2", "p4"], ["p1", first, "S", "a4"])
    session.uncompact(session.active[0])
    to_p3 = session.rewind("p3")
    _turns(session, "5")
    session.rewind("p5")
    session.uncompact(to_p3.id)
    return list(session.active)


def test_a_rewinds_undo_keeps_the_order_of_the_older_turns_it_goes_among(
    store: SessionStore,
) -> None:
    """Undoing the rewind to p5 puts p5 a5 after the turns another rewind's undo put back
    and keeps their order (p3 a3, the second summary, a4): sorted where each came, the
    summary went before p3 (p2 came first), and its undo put p4 before p3."""
    session = store.create()
    second, to_p5 = _summary_of_turns_before_and_after_others(session)
    session.uncompact(to_p5)
    assert session.view == ["p1", "a1", "p3", "a3", session.view[4], "a4", "p5", "a5"]
    session.uncompact(second)
    assert session.view == [f"{r}{n}" for n in "12345" for r in "pa"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(2))))
def test_a_summary_of_turns_before_and_after_others_and_a_rewind_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _summary_of_turns_before_and_after_others(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "12345" for r in "pa"]


def _summary_put_back_before_older_turns(session: Session) -> list[str]:
    """Rewinds to p2, p3 and p4, each after the turn sent since the one before; the rewind
    to p2 is undone (p2 a2 go back before p5 a5), a summary of a2 p5 a5 follows p2, and a
    rewind to p2 takes p2 and the summary; the rewind to p4 is undone: p4 a4 follow a1.
    The boundaries: the rewind to p3, the summary, the second rewind to p2."""
    _turns(session, *"12")
    to_p2 = session.rewind("p2")
    _turns(session, "3")
    session.rewind("p3")
    _turns(session, "4")
    to_p4 = session.rewind("p4")
    _turns(session, "5")
    session.uncompact(to_p2.id)
    _summarize(session, ["a2", "p5", "a5"], ["p1", "a1", "p2", "S"])
    session.rewind("p2")
    session.uncompact(to_p4.id)
    return list(session.active)


def test_a_summary_undone_before_older_turns_puts_its_later_turns_after_them(
    store: SessionStore,
) -> None:
    """Undoing the second rewind to p2 puts the summary before p4 a4 (a2 came first);
    undoing the summary then puts p5 a5 after p4 a4, where they came, not before them."""
    session = store.create()
    _, summary, rewind = _summary_put_back_before_older_turns(session)
    session.uncompact(rewind)
    assert session.view[:3] == ["p1", "a1", "p2"] and session.view[4:] == ["p4", "a4"]
    session.uncompact(summary)
    assert session.view == ["p1", "a1", "p2", "a2", "p4", "a4", "p5", "a5"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_summary_put_back_before_older_turns_and_two_rewinds_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _summary_put_back_before_older_turns(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "12345" for r in "pa"]


def _pinned_first_prompt_then_summarized(session: Session) -> list[str]:
    """p0 (pinned) stays beside a summary of a0 p1 a1; unpinned, a second summary takes it
    with p2; a third summarizes both summaries. The boundaries: first, second, third."""
    _turns(session, *"012")
    first = _summarize(session, ["p0", "a0", "p1", "a1"], ["S", "p0", "p2", "a2"])
    second = _summarize(session, ["p0", "p2"], [first, "S", "a2"])
    _summarize(session, [first, second], ["S", "a2"])
    return list(session.active)


def test_a_summary_inside_another_whose_undo_would_lose_the_first_prompt_is_refused(
    store: SessionStore,
) -> None:
    """Undoing the first summary inside the third would leave p0 inside the second: the
    third's undo would then open the view with a0, and was refused, so undoing everything
    latest first could not go on. The undo names the third compaction to undo first and
    writes nothing."""
    session = store.create()
    first, _, third = _pinned_first_prompt_then_summarized(session)
    before = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match="undo that compaction first") as refused:
        session.uncompact(first)
    assert third in str(refused.value)
    assert session.transcript.path.read_bytes() == before and first in session.active
    while session.active:
        session.uncompact(session.active[-1])
    assert session.view == ["p0", "a0", "p1", "a1", "p2", "a2"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_a_pinned_first_prompt_summarized_later_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _pinned_first_prompt_then_summarized(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == ["p0", "a0", "p1", "a1", "p2", "a2"]


def _pinned_beside_twice_then_held(session: Session) -> list[str]:
    """p2 and a2 (pinned) stay beside a summary of p1 a1 p3; a2, unpinned, goes into a
    second summary with a3, p2 still beside it; the first summary is undone, and a third
    summarizes p1 a1 p3, p2 beside it again. The boundaries: second, third."""
    _turns(session, *"123")
    first = _summarize(session, ["p1", "a1", "p2", "a2", "p3"], ["S", "p2", "a2", "a3"])
    second = _summarize(session, ["p2", "a2", "a3"], [first, "S", "p2"])
    session.uncompact(session.active[0])
    _summarize(session, ["p1", "a1", "p2", "p3"], ["S", "p2", second])
    return list(session.active)


def test_a_message_after_a_span_that_came_before_its_later_turns_goes_among_them(
    store: SessionStore,
) -> None:
    """Undoing the second summary puts a2 a3 after p2, beside the third summary; undoing
    the third then puts a2 back between p2 and p3, where it came: p2, verbatim after the
    summary, goes back into the span, and a2 after it was left after p3."""
    session = store.create()
    second, third = _pinned_beside_twice_then_held(session)
    session.uncompact(second)
    assert session.view[1:] == ["p2", "a2", "a3"]
    session.uncompact(third)
    assert session.view == [f"{r}{n}" for n in "123" for r in "pa"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(2))))
def test_a_message_pinned_beside_twice_then_held_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _pinned_beside_twice_then_held(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "123" for r in "pa"]


def _summary_a_rewind_kept_undone_inside_a_later_one(session: Session) -> list[str]:
    """p0 (pinned) stays beside a summary of a0 p1 a1; a rewind to p0 keeps the summary,
    p3 a3 are sent, and a later summary takes the first one with p3; the first summary
    is undone inside it (a turn was sent since: its span, cut before p0, goes with the
    rewind). The boundaries: the rewind, the later summary."""
    _turns(session, *"012")
    inner = _summarize(session, ["p0", "a0", "p1", "a1"], ["S", "p0", "p2", "a2"])
    session.rewind("p0")
    _turns(session, "3")
    _summarize(session, [inner, "p3"], ["S", "a3"])
    session.uncompact(session.active[0])
    return list(session.active)


def test_a_rewinds_undo_that_would_put_back_turns_a_summary_quotes_is_refused(
    store: SessionStore,
) -> None:
    """The rewind holds a0 p1 a1, which the later summary's text covers (it quotes the
    first one): its undo put them back beside it, and the model got them twice. The undo
    names the later compaction to undo first and writes nothing."""
    session = store.create()
    rewind, later = _summary_a_rewind_kept_undone_inside_a_later_one(session)
    before = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match="undo that compaction first") as refused:
        session.uncompact(rewind)
    assert later in str(refused.value)
    assert session.transcript.path.read_bytes() == before and rewind in session.active
    session.uncompact(later)
    session.uncompact(rewind)
    assert session.view == [f"{r}{n}" for n in "0123" for r in "pa"]


def _span_before_a_summary_of_older_turns(session: Session) -> list[str]:
    """A summary of p2 stands after a1; a second summary of a1 and p4 a4 stands before it,
    in a1's place, with a2 p3 a3 after it. The boundaries: first, second."""
    _turns(session, *"1234")
    first = _summarize(session, ["p2"], ["p1", "a1", "S", "a2", "p3", "a3", "p4", "a4"])
    _summarize(session, ["a1", "p4", "a4"], ["p1", "S", first, "a2", "p3", "a3"])
    return list(session.active)


def test_a_summary_of_older_turns_after_a_span_put_back_goes_among_it(
    store: SessionStore,
) -> None:
    """Undoing the second summary puts p4 a4 after the summary of p2 and a2 p3 a3 (they
    all came before p4): the summary ended the messages merged with the span, so p4 a4
    stayed before it, and its undo put p2 after them."""
    session = store.create()
    first, second = _span_before_a_summary_of_older_turns(session)
    session.uncompact(second)
    held = session.boundaries[first].summary_id
    assert session.view == ["p1", "a1", held, "a2", "p3", "a3", "p4", "a4"]
    session.uncompact(first)
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]


@pytest.mark.parametrize("perm", list(itertools.permutations(range(2))))
def test_a_span_before_a_summary_of_older_turns_undone_in_any_order(
    store: SessionStore, perm: tuple[int, ...]
) -> None:
    session = store.create()
    boundaries = _span_before_a_summary_of_older_turns(session)
    _undo_all(session, [boundaries[i] for i in perm])
    assert session.view == [f"{r}{n}" for n in "1234" for r in "pa"]
