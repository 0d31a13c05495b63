"""A compaction draft (`<id>.draft.json`) across the session's own changes that are not a
conversation's: a rename leaves it as fresh as it was; a delete takes it away with the
session, and what another program put in its place is left as it is."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from test_compaction_drafts import conversation

from baton.core.compaction import engine
from baton.core.compaction.preview import CompactDraft, draft_path
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton.core.errors import DraftStale, SessionNotFound
from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, Settings


@pytest.fixture
def service(tmp_path: Path) -> BatonService:
    keep = KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000)
    return BatonService(Settings(data_dir=str(tmp_path / "data"), keep_window=keep))


def drafted(service: BatonService, sid: str) -> CompactDraft:
    return asyncio.run(service.drafts.preview(sid, CompactRequest("all")))


def names(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir())


@pytest.mark.parametrize("held", [True, False])
def test_a_deleted_sessions_draft_goes_with_it(service: BatonService, held: bool) -> None:
    """A delete left the session's compaction draft behind for good: no Apply could ever
    use it (the session is gone), yet the file stayed in the sessions folder, summary and
    all, for whatever reads that folder. The delete now removes it, whether the session
    was open (its draft just made) or not (a restart since)."""
    sid = conversation(service)
    drafted(service, sid)
    path = draft_path(service.session(sid))
    transcript = service.session(sid).transcript.path
    assert path.exists()
    if not held:
        asyncio.run(service.close())
        service = BatonService(service.settings)

    service.delete(sid)

    assert names(path.parent) == [transcript.name]  # the transcript alone, kept
    with pytest.raises(SessionNotFound):
        service.session(sid)
    asyncio.run(service.close())


@pytest.mark.timeout(60)  # a FIFO opened would wait for a writer
@pytest.mark.parametrize("kind", ["fifo", "directory", "link"])
def test_a_delete_leaves_what_is_no_draft_in_its_place(
    service: BatonService, tmp_path: Path, kind: str
) -> None:
    """A FIFO, a folder or a link that another program put where the draft would be is not
    Baton's: the delete goes through and leaves it (and a link's target) as it is."""
    sid = conversation(service, turns=4)
    path = draft_path(service.session(sid))
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(outside)

    service.delete(sid)

    assert path.is_fifo() == (kind == "fifo") and path.is_dir() == (kind == "directory")
    assert path.is_symlink() == (kind == "link") and outside.read_text() == "{}"
    with pytest.raises(SessionNotFound):
        service.session(sid)


def test_a_rename_leaves_a_draft_applicable(service: BatonService) -> None:
    """A rename made the session's draft stale: Apply answered draft_stale ("the session
    changed since draft ... was made; preview the compaction again") and the hover called
    it stale, so a user who named the chat while reading the draft paid for another
    summary. The draft was fingerprinted by the transcript's size, which the rename's
    record grows; a title is nothing a compaction plans on. The records appended since are
    read back: renames alone leave the draft fresh, anything else makes it stale."""
    sid = conversation(service)
    draft = drafted(service, sid)
    service.rename(sid, "Module fixes")
    service.rename(sid, "Module fixes, m0 to m23")

    assert service.drafts.current(sid) == (draft, True)
    result = asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert result.summarized_message_ids == draft.summarized_message_ids
    assert service.session(sid).title == "Module fixes, m0 to m23"


def test_a_rename_while_the_summary_is_written_leaves_the_preview_whole(
    service: BatonService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same check at the preview's end failed it: "the conversation changed while the
    draft was written; try again", for a rename made while the summary streamed."""
    sid = conversation(service)
    summarize = engine.summarize

    async def renamed_meanwhile(*args: Any) -> Any:
        written = await summarize(*args)
        service.rename(sid, "Renamed meanwhile")
        return written

    monkeypatch.setattr(engine, "summarize", renamed_meanwhile)
    draft = drafted(service, sid)
    assert service.drafts.current(sid) == (draft, True)
    asyncio.run(service.drafts.apply(sid, draft.draft_id))


def test_a_rename_then_an_append_still_makes_a_draft_stale(service: BatonService) -> None:
    sid = conversation(service)
    draft = drafted(service, sid)
    service.rename(sid, "Module fixes")
    service.append(sid, [MessageInput(role="user", content="one more thing")])
    service.rename(sid, "Module fixes again")

    assert service.drafts.current(sid) == (draft, False)
    with pytest.raises(DraftStale):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
