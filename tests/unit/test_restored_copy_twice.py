"""An undo can bring an older restored copy of a file back beside a later one: the next
compaction that keeps both restores the file again, and its fresh copy takes the place of
both, so the view holds the file's text once; undoing that compaction puts both back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_compaction_drafts import conversation

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton.core.service.service import BatonService
from baton_testkit.services import service_with_open_file


def _copies(service: BatonService, sid: str, source: Path) -> list[str]:
    view = service.session(sid).view_messages()
    return [m.text() for m in view if m.kind == "attachment" and str(source) in m.text()]


def _turn(service: BatonService, sid: str, text: str) -> None:
    service.append(sid, [MessageInput(role="user", content=text)])
    service.append(sid, [MessageInput(role="assistant", content=f"Done: {text}")])


def test_a_copy_an_undo_brings_back_beside_a_later_one_is_replaced_with_it(
    tmp_path: Path,
) -> None:
    service, source = service_with_open_file(tmp_path)
    sid = conversation(service, turns=6)
    session = service.session(sid)
    asyncio.run(service.compaction.compact(sid, CompactRequest("all")))
    [first] = [m.id for m in session.view_messages() if "VERSION = 1" in m.text()]
    _turn(service, sid, "Bump the version to 2.")
    source.write_text("VERSION = 2\n")
    up_to = asyncio.run(service.compaction.compact(sid, CompactRequest("up_to", first)))
    assert first not in session.view
    [second] = [m.id for m in session.view_messages() if "VERSION = 2" in m.text()]
    _turn(service, sid, "Bump the version to 3.")
    source.write_text("VERSION = 3\n")
    end = session.view[session.view.index(second) + 1]
    asyncio.run(service.compaction.compact(sid, CompactRequest("range", second, end)))
    service.compaction.uncompact(sid, up_to.boundary_id)
    # the undo gives back what the up_to compacted: the first copy, beside the range's
    assert len(_copies(service, sid, source)) == 2
    _turn(service, sid, "Now write the tests.")
    _turn(service, sid, "And the docs.")
    before = list(session.view)

    later = asyncio.run(service.compaction.compact(sid, CompactRequest("from", session.view[-2])))

    [copy] = _copies(service, sid, source)
    assert "VERSION = 3" in copy
    assert [f.uri for f in later.restored_files] == [source.as_uri()]
    assert service.usage(sid).used_tokens == later.post_tokens
    service.compaction.uncompact(sid, later.boundary_id)
    assert session.view == before
    asyncio.run(service.close())
