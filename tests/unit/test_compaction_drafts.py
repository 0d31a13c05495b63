"""Compaction drafts: preview, then apply as written or edited, regenerate, discard; the
draft record is never history (undo, restart); a stale draft is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from baton.core.compaction.preview import draft_path
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput, TextBlock, ToolResultBlock, ToolUseBlock
from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, Settings

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
]


def _text(i: int, n: int = 120) -> str:
    return " ".join(WORDS[(i * 7 + k) % len(WORDS)] + str(k % 13) for k in range(n))


def conversation(service: BatonService, turns: int = 24) -> str:
    session = service.create(title="drafts", model="claude-sonnet-4-5")
    sid = session.session_id
    batch: list[MessageInput] = []
    for i in range(turns):
        batch.append(
            MessageInput(role="user", content=f"Please fix module m{i}.py now. {_text(i)}")
        )
        call = f"toolu_{i:04d}"
        batch.append(
            MessageInput(
                role="assistant",
                content=[
                    TextBlock(text=f"Reading m{i}.py. {_text(i + 1, 40)}"),
                    ToolUseBlock(id=call, name="Read", input={"file_path": f"/src/m{i}.py"}),
                ],
            )
        )
        batch.append(
            MessageInput(
                role="user",
                content=[ToolResultBlock(tool_use_id=call, content=_text(i + 2, 200))],
            )
        )
        batch.append(MessageInput(role="assistant", content=f"Done with m{i}. {_text(i + 3, 60)}"))
    service.append(sid, batch)
    return sid


@pytest.fixture
def service(tmp_path: Path) -> BatonService:
    settings = Settings(
        data_dir=str(tmp_path / "data"),
        keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
    )
    return BatonService(settings)


def _request(service: BatonService, sid: str, direction: str) -> CompactRequest:
    view = service.session(sid).view
    if direction == "all":
        return CompactRequest("all")
    if direction == "up_to":
        return CompactRequest("up_to", view[len(view) // 2])
    if direction == "from":
        return CompactRequest("from", view[len(view) // 3])
    return CompactRequest("range", view[8], view[len(view) // 2])


@pytest.mark.parametrize("direction", ["all", "up_to", "from", "range"])
def test_preview_then_apply_give_the_same_sizes(service: BatonService, direction: str) -> None:
    sid = conversation(service)
    transcript = Path(service.session(sid).transcript.path)
    before = transcript.read_bytes()
    draft = asyncio.run(service.drafts.preview(sid, _request(service, sid, direction)))
    assert transcript.read_bytes() == before  # a preview writes no history
    assert draft.summary and draft.summarized_message_ids and draft.post_tokens < draft.pre_tokens
    result = asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert result.summarized_message_ids == draft.summarized_message_ids
    assert abs(result.post_tokens - draft.post_tokens) <= 0.01 * result.post_tokens
    assert service.usage(sid).used_tokens == result.post_tokens
    assert not draft_path(service.session(sid)).exists()
