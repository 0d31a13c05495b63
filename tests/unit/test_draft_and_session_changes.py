"""A compaction draft (`<id>.draft.json`) across the session's own changes that are not a
conversation's: a rename leaves it as fresh as it was; a delete takes it away with the
session, and what another program put in its place is left as it is."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_compaction_drafts import conversation

from baton.cli.main import EXAMPLE_SESSION
from baton.core.compaction import engine
from baton.core.compaction.draft_file import draft_path
from baton.core.compaction.draft_record import CompactDraft
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.transcript import Transcript, read_events, renamed
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


def test_a_rename_that_mends_a_torn_last_line_leaves_a_draft_fresh(
    service: BatonService,
) -> None:
    """A session whose transcript ended on a torn line (a crash midway through a write)
    lost its draft to a rename: the rename, its first write, cut the torn line before
    appending its record, so the file grew by less than the record (or shrank), and what
    the draft's fingerprint read back since its size was no run of renames: stale. The
    fingerprint counts the transcript's events but renames, which a torn line is not."""
    sid = conversation(service)
    path = service.session(sid).transcript.path
    asyncio.run(service.close())
    with open(path, "ab") as transcript:
        transcript.write(b'{"type": "message", "message": {"id": "m_torn", "role": "us')
    service = BatonService(service.settings)
    draft = drafted(service, sid)

    service.rename(sid, "Module fixes")

    assert service.drafts.current(sid) == (draft, True)
    result = asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert result.summarized_message_ids == draft.summarized_message_ids
    asyncio.run(service.close())


def test_many_renames_leave_a_draft_fresh(service: BatonService) -> None:
    """Renames past 64 KB of records since the draft (300 of 200 characters) made it stale:
    only that much of what the transcript grew by was read back to be checked."""
    sid = conversation(service)
    draft = drafted(service, sid)
    for n in range(300):
        service.rename(sid, f"{n:03d} " + "x" * 196)

    assert service.drafts.current(sid) == (draft, True)
    asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert service.session(sid).title.startswith("299 ")


def test_a_rename_by_another_process_leaves_a_draft_fresh(service: BatonService) -> None:
    """The draft's server let go of the session, another server renamed it (twice) and let
    go in turn: the first reads the session again and still applies its draft."""
    sid = conversation(service)
    draft = drafted(service, sid)
    assert service.store.put_down(sid)
    other = BatonService(service.settings)
    other.rename(sid, "Renamed elsewhere")
    other.rename(sid, "Renamed elsewhere again")
    asyncio.run(other.close())

    assert service.drafts.current(sid) == (draft, True)
    asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert service.session(sid).title == "Renamed elsewhere again"
    asyncio.run(service.close())


def test_a_record_written_by_another_program_into_the_held_file_makes_a_draft_stale(
    service: BatonService,
) -> None:
    """The file the server holds, written to by another program since the draft: stale,
    whatever was written (the session is read again at its next write)."""
    sid = conversation(service)
    draft = drafted(service, sid)
    with open(service.session(sid).transcript.path, "ab") as transcript:
        transcript.write(b'{"type": "meta", "title": "Renamed by hand"}\n')

    assert service.drafts.current(sid) == (draft, False)
    with pytest.raises(DraftStale):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))


def test_a_draft_saved_in_the_earlier_format_is_stale_and_says_why(
    service: BatonService,
) -> None:
    """A record of the first format (its fingerprint the transcript's bytes, which this
    version no longer keeps) is never applied: stale, with why; it can still be shown,
    regenerated and discarded."""
    sid = conversation(service)
    draft = drafted(service, sid)
    path = draft_path(service.session(sid))
    record = json.loads(path.read_text())
    size = service.session(sid).transcript.path.stat().st_size
    record["version"] = 1
    record["fingerprint"] = {"view": record["fingerprint"]["view"], "transcriptBytes": size}
    path.write_text(json.dumps(record))

    assert service.drafts.current(sid) == (draft, False)
    with pytest.raises(DraftStale, match="saved by an earlier version of Baton"):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
    again = asyncio.run(
        service.drafts.preview(sid, CompactRequest("all"), regenerate=draft.draft_id)
    )
    assert service.drafts.current(sid) == (again, True)
    asyncio.run(service.drafts.apply(sid, again.draft_id))


def test_a_draft_saved_in_the_earlier_format_can_be_discarded(service: BatonService) -> None:
    sid = conversation(service)
    draft = drafted(service, sid)
    path = draft_path(service.session(sid))
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "version": 1}))

    service.drafts.discard(sid, draft.draft_id)

    assert not path.exists() and service.drafts.current(sid) is None


def test_the_events_counted_as_held_are_those_a_fresh_read_counts(
    service: BatonService,
) -> None:
    """The fingerprint counts a transcript's events but renames as the server read and
    wrote them: the same figure as a restart's read of the file, for a session made here
    (a pin, a model switch, renames) and for one an import wrote (replayed from what it
    wrote, never read)."""
    sid = conversation(service, turns=3)
    session = service.session(sid)
    service.pin(sid, session.view[0], True)
    service.rename(sid, "Renamed")
    session.set_meta(model="claude-opus-4-1")
    service.rename(sid, "Renamed again")
    imported = asyncio.run(service.import_file(str(EXAMPLE_SESSION))).session

    for held in (session, imported):
        path = held.transcript.path
        renames = sum(1 for event in read_events(path)[0] if renamed(event))
        assert held.transcript.events_but_renames == len(read_events(path)[0]) - renames
        with Transcript.open(path, writable=False) as fresh:
            assert held.transcript.events_but_renames == fresh.events_but_renames
    assert session.transcript.events_but_renames == 1 + 12 + 1 + 1  # header, turns, pin, model
