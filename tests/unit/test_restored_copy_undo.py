"""A file restored again by round after round of compactions: each fresh copy takes the
place of the stale one it replaces, and undoing a later compaction puts the copy it
replaced back in that place, not among the turns by when its first copy was made."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_compaction_drafts import conversation

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton_testkit.services import service_with_open_file


def test_undo_puts_a_copy_that_replaced_a_stale_one_back_in_its_place(tmp_path: Path) -> None:
    # the third copy stood for the second, itself in the first one's place: undone, the
    # second went back after the turns kept since the first was made (the place the
    # first copy came in the session), behind the summary and turns it stood before
    service, source = service_with_open_file(tmp_path)
    sid = conversation(service, turns=6)
    session = service.session(sid)
    view = session.view
    asyncio.run(service.compaction.compact(sid, CompactRequest("range", view[0], view[3])))
    source.write_text("VERSION = 2\n")
    view = session.view
    asyncio.run(service.compaction.compact(sid, CompactRequest("range", view[-2], view[-1])))
    [copy] = [m for m in session.view_messages() if "VERSION = 2" in m.text()]
    assert session.view[1] == copy.id  # in the first copy's place, after the first summary
    source.write_text("VERSION = 3\n")
    service.append(sid, [MessageInput(role="user", content="Bump the version again.")])
    service.append(sid, [MessageInput(role="assistant", content="Bumped.")])
    before = list(session.view)

    third = asyncio.run(service.compaction.compact(sid, CompactRequest("from", session.view[2])))
    assert [m.kind for m in session.view_messages()][:2] == ["summary", "attachment"]
    assert "VERSION = 3" in session.view_messages()[1].text()

    service.compaction.uncompact(sid, third.boundary_id)
    assert session.view == before
    asyncio.run(service.close())
