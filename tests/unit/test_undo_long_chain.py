"""The check of an undo on a long chain of summaries (each summarizing the one before, as
a long imported session's do) reads each message a few times, not once per summary: the
walk of what every summary in force stands for was the square of the chain (5-8 s on the
bench's 100 MB Claude Code session, 504 compactions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from test_undo_chronology import _summarize, _turns

from baton.core.conversation import undo_place
from baton.core.conversation.store import SessionStore
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
    session = store.create()
    _turns(session, "0")
    summary = _summarize(session, ["p0", "a0"], ["S"])
    for n in range(1, CHAIN):
        _turns(session, str(n))
        summary = _summarize(session, [summary, f"p{n}", f"a{n}"], ["S"])
    read: list[int] = []
    original = undo_place.reached

    def reached(ids: Iterable[str], stands_for: dict[str, list[str]]) -> set[str]:
        out = original(ids, stands_for)
        read.append(len(out))
        return out

    monkeypatch.setattr(undo_place, "reached", reached)
    latest = session.boundaries[session.active[-1]]
    assert check_undo(session, latest.id) == latest.stands_for[summary]
    assert sum(read) < 4 * len(session.messages)
