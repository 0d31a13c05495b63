"""The files kept beside a transcript, a compaction's draft (`<id>.draft.json`) and the
session notes (`<id>.notes.md`), are read only as regular files: a FIFO of that name is
never waited on (a hover of the usage line, a notes update, a compaction with the memory
summarizer would hold the server's loop for as long as its writer stayed), a link never
followed (to /dev/zero: read without end), a folder read as none."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fifo_probe import read_of_fifo

from baton.core.compaction import draft_file, draft_record
from baton.core.compaction.summary.notes import MemoryNotes, NotesMark, notes_path
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import DraftNotFound

NOTES = "<!-- baton-notes covered=m1 updated=x -->\n# Current state\nOUTSIDE NOTES\n"


def read_draft(session: Session) -> object:
    return draft_record.current_draft(session)


def read_notes(session: Session) -> object:
    return MemoryNotes.for_session(session).read()


NOTHING: dict[str, object] = {"draft": None, "notes": (None, NotesMark())}
READS: dict[str, Callable[[Session], object]] = {"draft": read_draft, "notes": read_notes}


def side_path(session: Session, which: str) -> Path:
    if which == "draft":
        return draft_file.draft_path(session)
    return notes_path(session.transcript.path)


@pytest.mark.parametrize("which", ["draft", "notes"])
def test_a_fifo_in_its_place_is_neither_waited_on_nor_read(store: SessionStore, which: str) -> None:
    session = store.create(title="side files")
    taken, answers = read_of_fifo(side_path(session, which), lambda: READS[which](session))
    assert not taken, "the FIFO was read"
    assert answers == [NOTHING[which]]
    if which == "draft":
        with pytest.raises(DraftNotFound):
            draft_record.load_record(session, "d_1")


@pytest.mark.parametrize("which", ["draft", "notes"])
def test_a_link_or_a_folder_in_its_place_is_none(
    store: SessionStore, tmp_path: Path, which: str
) -> None:
    session = store.create(title="side files")
    outside = tmp_path / "outside"
    outside.write_text(NOTES)
    path = side_path(session, which)
    path.symlink_to(outside)
    assert READS[which](session) == NOTHING[which]
    path.unlink()
    path.mkdir()
    assert READS[which](session) == NOTHING[which]


def test_a_draft_nested_too_deep_is_none(store: SessionStore) -> None:
    """A draft record of brackets nested past the JSON parser's depth failed every read of
    it with a RecursionError (a hover of the usage line, a commit: an internal error)."""
    session = store.create(title="side files")
    side_path(session, "draft").write_bytes(b"[" * 4_000)
    assert read_draft(session) is None
    with pytest.raises(DraftNotFound):
        draft_record.load_record(session, "d_1")
