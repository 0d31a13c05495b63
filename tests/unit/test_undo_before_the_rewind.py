"""Undo of a summary a rewind took out, whose span holds a message that came before the
message the rewind was to: a tool call pinned beside an older summary, summarized since by
a later one and left inside it when the older summary was undone, all before a rewind that
kept the turn around the call and took the later summary out. The call goes back into the
view where it came, among the turns the rewind kept, not to the rewind, whose undo would
put it after them (a compaction walk's seed with an open editor file, reduced)."""

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

CAME = ["p0", "u0", "r0", "a0", "p1", "a1", "p2", "a2", "p3", "a3", "p4", "a4", "p5", "a5"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def test_a_call_from_before_the_rewind_goes_back_into_the_view(store: SessionStore) -> None:
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
    _turns(session, "1", "2", "3")
    # the older summary stands for turn 0's call, kept verbatim beside it (pinned), a0 .. p2
    older = _summarize(session, CAME[1:7], ["p0", "S", "u0", "r0", "a2", "p3", "a3"])
    undo_older = session.active[-1]
    later = _summarize(session, ["u0", "r0", "a2", "p3"], ["p0", older, "S", "a3"])
    undo_later = session.active[-1]
    _turns(session, "4")
    session.uncompact(undo_older)  # the call stays inside the later summary
    assert session.view == ["p0", "a0", "p1", "a1", "p2", later, "a3", "p4", "a4"]
    rewind = session.rewind("p1").id  # keeps p0 a0, takes the later summary
    _turns(session, "5")

    session.uncompact(undo_later)

    assert session.view == ["p0", "u0", "r0", "a0", "p5", "a5"]
    assert session.boundaries[rewind].summarized_ids == CAME[4:12]
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == session.view
    session.uncompact(rewind)
    assert session.view == CAME
