"""An undo works out the view it gives once: the check before the write and the replay
of the written record each worked it out again (three passes over the whole view, seconds
on the server's loop for a session of 100,000 messages). Checked by counting the passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.conversation import undo
from baton.core.conversation.messages import Message, TextBlock
from baton.core.service.service import BatonService
from baton.core.settings import Settings


def _turns(n: int) -> list[Message]:
    roles = ("user", "assistant")
    return [
        Message(id=f"m{i}", role=roles[i % 2], content=[TextBlock(text=f"message {i} words")])
        for i in range(n)
    ]


async def test_an_undo_works_out_its_view_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = BatonService(Settings.model_validate({"dataDir": str(tmp_path)}))
    session = service.create(title="undo")
    session.append(_turns(40))
    before = list(session.view)
    request = CompactRequest(direction="up_to", pivot_message_id=before[-3])
    await service.compaction.compact(session.session_id, request)
    assert session.view != before
    passes: list[list[str]] = []
    original = undo.put_back

    def counted(view: list[str], *args: Any) -> list[str]:
        passes.append(view)
        return original(view, *args)

    monkeypatch.setattr(undo, "put_back", counted)
    service.compaction.uncompact(session.session_id)
    assert session.view == before
    assert len(passes) == 1
    # and read again from its file, the session has the same view
    service.store.close()
    assert service.session(session.session_id).view == before
