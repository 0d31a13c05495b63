"""The check of an undo on a long chain of summaries (each summarizing the one before, as
a long imported session's do) reads each message a few times, not once per summary: the
walk of what every summary in force stands for was the square of the chain (5-8 s on the
bench's 100 MB Claude Code session, 504 compactions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_undo_chronology import _summarize, _turns

from baton.core.conversation import undo, undo_ahead, undo_held, undo_summarized
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.summary_text import Texts
from baton.core.conversation.undo_check import check_undo

CHAIN = 60


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_undoing_the_latest_of_a_long_chain_reads_each_message_a_few_times(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, summary = _chain(store)
    read: list[int] = []
    original = undo_summarized.reached

    def reached(ids: Iterable[str], stands_for: dict[str, list[str]]) -> set[str]:
        out = original(ids, stands_for)
        read.append(len(out))
        return out

    monkeypatch.setattr(undo_summarized, "reached", reached)
    latest = session.boundaries[session.active[-1]]
    assert check_undo(session, latest.id) == latest.stands_for[summary]
    assert sum(read) < 4 * len(session.messages)


def test_undoing_the_oldest_of_a_long_chain_reads_only_what_each_step_changes(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check undoes, on a copy, each summary that holds the oldest, twice: at each of
    those undos, what every other summary stands for was read again, one message at a
    time, where none of it changes (only the one that stood for the undone summary does),
    and the whole view walked for rewinds when none is in force."""
    session, _ = _chain(store)
    read: list[int] = []
    original_put_back, original_reached = undo.put_back, undo_held.reached

    def put_back(ids: list[str], *args: Any) -> list[str]:
        read.append(len(ids))
        return original_put_back(ids, *args)

    def reached(ids: Iterable[str], stands_for: dict[str, list[str]]) -> set[str]:
        out = original_reached(ids, stands_for)
        read.append(len(out))
        return out

    monkeypatch.setattr(undo, "put_back", put_back)
    monkeypatch.setattr(undo_held, "reached", reached)
    oldest = session.boundaries[session.active[0]]
    after = check_undo(session, oldest.id)
    assert after == session.view  # its turns stay inside the summaries that hold it
    assert sum(read) < 10_000  # 32,101 so: each summary's span read at each of 119 undos


def test_the_undos_the_check_of_the_oldest_works_out_read_each_text_once(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Those undos, on a copy, of each summary that holds the oldest, twice, read what
    every summary's text covers again at each (the whole chain's, at each of 119 undos):
    each is read once for them all now, and once for the check's own placing."""
    session, _ = _chain(store)
    read: list[str] = []
    base = Texts._base

    def counted(self: Texts, mid: str) -> list[str]:
        read.append(mid)
        return base(self, mid)

    monkeypatch.setattr(Texts, "_base", counted)
    oldest = session.boundaries[session.active[0]]
    assert check_undo(session, oldest.id) == session.view
    owned = sum(len(b.new_messages) for b in session.boundaries.values())
    assert owned == CHAIN and len(read) <= 2 * owned


def test_the_undos_the_check_of_the_oldest_works_out_check_the_rules_where_views_differ(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of those undos, with the oldest undone, gave a view checked against the API's
    rules (each a walk of every message in it), where the same undo without it gives the
    same view but at the last (the one of the summary that holds it directly): a view
    that changes as the one without it did is not checked again."""
    session, _ = _chain(store)
    checked: list[int] = []
    original = undo_ahead._breaks

    def breaks(view: list[str], messages: Any) -> bool:
        checked.append(len(view))
        return original(view, messages)

    monkeypatch.setattr(undo_ahead, "_breaks", breaks)
    oldest = session.boundaries[session.active[0]]
    assert check_undo(session, oldest.id) == session.view
    assert len(checked) == 1  # 59 so: one at each undo of a summary that holds it


def _chain(store: SessionStore) -> tuple[Session, str]:
    """A session of CHAIN compactions, each summarizing the one before and a turn, and the
    latest summary's id."""
    session = store.create()
    _turns(session, "0")
    summary = _summarize(session, ["p0", "a0"], ["S"])
    for n in range(1, CHAIN):
        _turns(session, str(n))
        summary = _summarize(session, [summary, f"p{n}", f"a{n}"], ["S"])
    return session, summary
