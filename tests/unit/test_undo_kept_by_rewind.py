"""Undo of a summary a rewind took out, whose span holds a message the rewind kept: a tool
call pinned beside an older summary, summarized since by this one and left inside it when
the older summary was undone, goes back into the view where it came, among the turns the
rewind kept, not to the rewind, whose undo would put it after them (a compaction walk's
seed with an open editor file, reduced)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import reload
from test_undo_chronology import _summarize, _turns

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.store import SessionStore

CAME = ["p0", "u0", "r0", "a0", "p1", "a1", "p2", "a2", "p3", "a3"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_a_message_the_rewind_kept_goes_back_into_the_view(store: SessionStore) -> None:
    session = store.create()
    call = ToolUseBlock(id="t0", name="Read", input={"file_path": "/f.py"})
    session.append(
        [
            MessageInput(id="p0", role="user", content="prompt 0"),
            Message(id="u0", role="assistant", content=[call]),
            MessageInput(id="r0", role="user", content=[ToolResultBlock(tool_use_id="t0")]),
            Message(id="a0", role="assistant", content=[TextBlock(text="answer 0")]),
        ]
    )
    _turns(session, "1", "2")
    # the first summary stands for turn 0's call, kept verbatim beside it (pinned), and a0
    first = _summarize(session, CAME[1:4], ["p0", "S", *CAME[1:3], *CAME[4:8]])
    undo_first = session.active[-1]
    older = session.rewind("p1").id
    _turns(session, "3")
    second = _summarize(session, ["u0", "r0", "p3", "a3"], ["p0", first, "S"])
    undo_second = session.active[-1]
    session.uncompact(older)  # p1 .. a2 back between the two summaries
    assert session.view == ["p0", first, "p1", "a1", "p2", "a2", second]
    rewind = session.rewind("p2").id  # keeps the first summary (and the call), takes the second
    session.uncompact(undo_first)
    assert session.view == ["p0", "a0", "p1", "a1"]  # the call stays inside the second summary

    session.uncompact(undo_second)

    assert session.view == CAME[:6]
    assert session.boundaries[rewind].summarized_ids == ["p2", "a2", "p3", "a3"]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    session.uncompact(rewind)
    assert session.view == CAME
