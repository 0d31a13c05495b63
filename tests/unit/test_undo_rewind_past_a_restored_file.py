"""A rewind's undo puts a restored file it holds back right after the message it followed,
not where the file was written, past older turns that come back between the rewind's turns
(a compaction walk's seed with an open editor file, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.undo import undo_mapping
from baton.core.conversation.undo_place import put_back
from baton.core.conversation.undo_summarized import Summarized


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _with_file(session: Session, span: list[str], view_after: list[str]) -> tuple[str, str]:
    """A range compaction whose summary ("S" in `view_after`) stands for `span`, with a
    restored file ("A"); the summary's id and the file's."""
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary")])
    restored = Message(
        role="user", kind="attachment", content=[TextBlock(text="Restored file: open.py")]
    )
    named = {"S": summary.id, "A": restored.id}
    view = [named.get(mid, mid) for mid in view_after]
    session.commit_boundary(
        Boundary(
            direction="range",
            summary_id=summary.id,
            new_messages=[summary, restored],
            stands_for={summary.id: span, restored.id: []},
            summarized_ids=span,
            kept_ids=[mid for mid in view if mid not in named.values()],
            view_before=list(session.view),
            view_after=view,
        )
    )
    return summary.id, restored.id


def test_a_rewinds_undo_keeps_a_restored_file_after_the_message_it_followed(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, *"0123")
    summary, restored = _with_file(session, ["a0"], ["p0", "S", "A", *session.view[2:]])
    # Z summarized p2 a2, the turns before them kept beside it (pinned)
    held = ["p0", summary, restored, "p1", "a1"]
    _summarize(session, [*held, "p2", "a2"], ["S", *held, "p3", "a3"])
    undone = session.active[-1]
    older = session.rewind("p1").id  # keeps Z and p0, the summary of a0 and the file
    _turns(session, "4")
    rewind = session.rewind("p0").id  # keeps Z
    _turns(session, "5")
    session.uncompact(older)  # p1 a1 p3 a3 back after Z
    session.uncompact(undone)  # Z: p2 a2 go to the rewind, p1 a1 stay in the view

    # the file right after the summary it was restored with, p2 a2 where they came
    assert session.boundaries[rewind].summarized_ids == [*held[:3], "p2", "a2", "p4", "a4"]
    assert session.view == ["p1", "a1", "p3", "a3", "p5", "a5"]

    session.uncompact(rewind)

    # the file after the summary, p1 a1 and p3 a3 back among the rewind's turns where they came
    assert session.view == [*held, "p2", "a2", "p3", "a3", "p4", "a4", "p5", "a5"]
    assert invariant_violations(session.view_messages()) == []
    session.uncompact(session.active[-1])
    assert session.view == [f"{r}{n}" for n in "012345" for r in "pa"]
    assert reload(session).view == session.view


def test_a_restored_file_after_its_summary_leaves_older_turns_to_go_among_its_span() -> None:
    """The summary of a range from before and after older turns, with its restored file
    right after it (as a rewind's undo now puts the file, and as the range compaction laid
    them out), and those older turns after them (the rewind put them back there, where they
    came): undoing the summary puts those turns among its span, where they came, though the
    file, which goes with the summary, stood between them (the walk's seed 551, reduced)."""
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary")])
    restored = Message(
        role="user", kind="attachment", content=[TextBlock(text="Restored file: open.py")]
    )
    s, a = summary.id, restored.id
    compaction = Boundary(
        direction="range",
        summary_id=s,
        new_messages=[summary, restored],
        stands_for={s: ["a0", "p2"], a: []},
        summarized_ids=["a0", "p2"],
        kept_ids=["p0", "a2"],
        view_before=["p0", "a0", "p2", "a2"],
        view_after=["p0", s, a, "a2"],
    )
    order = {mid: n for n, mid in enumerate(["p0", "a0", "p1", "a1", "p2", "a2", "p3", s, a])}
    summarized = Summarized([compaction], [], order)

    view = put_back(["p0", s, a, "p1", "a1", "a2", "p3"], undo_mapping(compaction), (), summarized)

    assert view == ["p0", "a0", "p1", "a1", "p2", "a2", "p3"]
