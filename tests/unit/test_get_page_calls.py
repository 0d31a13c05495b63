"""A page of `baton/session/get` makes the tool-call lines of its own messages only, each
call's result looked up in the whole view (it may come after the page): a page of a
100,000-message session made them for every message of the view, then kept 50, and took
0.13-0.27 s on an idle server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.tools import display
from baton.lsp.features import sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server

TURNS = 20


def _turn(i: int) -> list[p.MessageInput]:
    call_id = f"toolu_page_{i:04d}"
    return [
        p.MessageInput(role="user", content=f"read file {i}"),
        p.MessageInput.model_validate(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": call_id, "name": "Read", "input": {"path": "a.py"}}
                ],
            }
        ),
        p.MessageInput.model_validate(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "x = 1"}],
            }
        ),
        p.MessageInput(role="assistant", content=f"read {i}"),
    ]


async def test_a_page_makes_the_call_lines_of_its_own_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    call = Call(create_server(BatonService(settings)))
    sid = (await sessions.create(call, p.CreateParams(title="calls"))).session_id
    turns = [m for i in range(TURNS) for m in _turn(i)]
    await sessions.append(call, p.AppendParams(session_id=sid, messages=turns))
    made: list[str] = []
    original = display.call_info

    def call_info(use: Any, *args: Any) -> Any:
        made.append(use.id)
        return original(use, *args)

    monkeypatch.setattr(display, "call_info", call_info)
    # the page ends on a call whose result is the next page's first message
    page = await sessions.get(call, p.PageParams(session_id=sid, offset=4, limit=2))

    assert [m.role for m in page.messages] == ["user", "assistant"]
    calls = page.messages[1].tool_calls
    assert calls is not None and [c.status for c in calls] == ["done"]
    assert page.total_messages == 4 * TURNS and page.offset == 4
    assert made == ["toolu_page_0001"], f"{len(made)} call lines made for a page of one call"
    whole = await sessions.get(call, p.PageParams(session_id=sid))
    assert [m.tool_calls for m in whole.messages[4:6]] == [m.tool_calls for m in page.messages]
