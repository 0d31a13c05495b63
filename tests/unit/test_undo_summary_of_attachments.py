"""Undoing a compaction that summarized a summary of nothing but attachments (a range
compaction of a restored file, on top of a whole compaction): that summary goes back where
it stood, beside the summary before it, not where the attachment it stands for was written
(the end of the session then), between a tool call and its result (a property test's
example, made explicit)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import Convo, reload

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, TextBlock, ToolResultBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, lambda m: 10 * len(m.content))
    yield sessions
    sessions.close()


def _note(kind: str, text: str) -> Message:
    return Message(role="user", kind=kind, content=[TextBlock(text=text)])


def _compact(
    session: Session,
    direction: str,
    span: list[str],
    view_after: list[str],
) -> tuple[str, str, str]:
    """A compaction whose summary ("S" in `view_after`) stands for `span`, with one restored
    file ("A"); the boundary's id, the summary's and the attachment's."""
    summary = _note("summary", f"summary of {', '.join(span)}")
    restored = _note("attachment", "Restored file: open.py")
    named = {"S": summary.id, "A": restored.id}
    view = [named.get(mid, mid) for mid in view_after]
    boundary = Boundary(
        direction=direction,  # type: ignore[arg-type]
        summary_id=summary.id,
        new_messages=[summary, restored],
        stands_for={summary.id: span, restored.id: []},
        summarized_ids=span,
        kept_ids=[mid for mid in view if mid not in named.values()],
        view_before=list(session.view),
        view_after=view,
    )
    session.commit_boundary(boundary)
    return boundary.id, summary.id, restored.id


def test_undo_puts_a_summary_of_an_attachment_back_beside_the_summary_before_it(
    store: SessionStore,
) -> None:
    convo = Convo(tokens=10)
    convo.user("prompt 0")
    convo.reply("answer 0")
    convo.user("prompt 1")
    convo.tools("Read", results=False)  # m4 calls t1, answered after the first compaction
    session = store.create(title="undo")
    session.append(convo.messages)
    _, first, restored = _compact(session, "all", ["m1"], ["S", "A", "m2", "m3", "m4"])
    answer = Message(
        id="result", role="user", content=[ToolResultBlock(tool_use_id="t1", content="read it")]
    )
    session.append([answer, convo.user("prompt 2"), convo.reply("answer 2")])
    view = [first, restored, "m2", "m3", "m4", "result", "m5", "m6"]
    assert session.view == view
    _, inner, again = _compact(session, "range", [restored], [first, "S", "A", *view[2:]])
    session.append([convo.user("prompt 3"), convo.reply("answer 3")])
    before = list(session.view)
    assert before == [first, inner, again, *view[2:], "m7", "m8"]

    last, _, _ = _compact(session, "up_to", before[:3], ["S", *before[3:], "A"])
    session.uncompact(last)

    assert session.view == before
    assert invariant_violations(session.view_messages()) == []
    assert reload(session).view == before
