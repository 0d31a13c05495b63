"""`baton/session/get` and `baton/session/render` read a view a page at a time (`offset`,
`limit`); without them the answers are what they always were."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton import protocol as p
from baton.core.errors import InvalidParams
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import sessions
from baton.lsp.features.common import Call, parse
from baton.lsp.server import BatonServer, create_server


@pytest.fixture
def server(tmp_path: Path) -> BatonServer:
    return create_server(BatonService(Settings(data_dir=str(tmp_path))))


async def _session(call: Call, turns: int) -> str:
    sid = (await sessions.create(call, p.CreateParams(title="paged"))).session_id
    messages = []
    for i in range(turns):
        messages.append(p.MessageInput(role="user", content=f"question {i}\nline two\n```x```"))
        messages.append(p.MessageInput(role="assistant", content=f"answer {i}"))
    await sessions.append(call, p.AppendParams(session_id=sid, messages=messages))
    return sid


def _page(sid: str, offset: int | None = None, limit: int | None = None) -> p.PageParams:
    return parse(p.PageParams, {"sessionId": sid, "offset": offset, "limit": limit})


async def test_get_pages_through_the_view(server: BatonServer) -> None:
    call = Call(server)
    sid = await _session(call, 12)
    whole = await sessions.get(call, _page(sid))
    assert set(whole.wire()) == {"session", "messages", "usage"}  # an old client's answer
    ids = [m.id for m in whole.messages]
    assert len(ids) == 24
    seen: list[str] = []
    offset = 0
    while True:
        page = await sessions.get(call, _page(sid, offset, 5))
        assert page.offset == offset and page.total_messages == 24
        assert page.usage == whole.usage
        if not page.messages:
            break
        seen += [m.id for m in page.messages]
        offset += len(page.messages)
    assert seen == ids
    assert [m.id for m in (await sessions.get(call, _page(sid, offset=20))).messages] == ids[20:]
    assert [m.id for m in (await sessions.get(call, _page(sid, limit=3))).messages] == ids[:3]


async def test_render_pages_join_into_the_document(server: BatonServer) -> None:
    call = Call(server)
    sid = await _session(call, 9)
    whole = await sessions.render(call, _page(sid))
    assert set(whole.wire()) == {"uri", "text", "version", "messages"}
    lines = whole.text.split("\n")
    text, ranges = "", []
    for offset in range(0, 25, 4):  # past the end: an empty page
        page = await sessions.render(call, _page(sid, offset, 4))
        assert page.offset == min(offset, 18) and page.total_messages == 18
        assert page.version == whole.version
        assert page.start_line is not None
        assert whole.text.startswith(text) and text.count("\n") == page.start_line
        text += page.text
        ranges += page.messages
        for r in page.messages:  # ranges are the whole document's lines
            assert (
                lines[r.range.start.line].startswith("## ")
                and r.message_id in lines[r.range.start.line]
            )
    assert text == whole.text
    assert ranges == whole.messages


async def test_paging_params_are_checked(server: BatonServer) -> None:
    for bad in ({"offset": -1}, {"limit": 0}, {"limit": "ten"}):
        with pytest.raises(InvalidParams):
            parse(p.PageParams, {"sessionId": "s", **bad})
