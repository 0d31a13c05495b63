"""A session file the command line changes a copy of (`compact`, `payload`): the file was
checked by its name (a regular file, a Baton transcript by its header), then copied by its
name again, so a FIFO another program put in its place in between was read by the copy
for as long as its writer stayed, the command waiting with it. The copy is of the file
opened, checked as it is opened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conversations import char_count
from fifo_probe import checked_as_regular, read_of_fifo

from baton.cli import session_files
from baton.cli.session_files import session_from_file
from baton.core.conversation.files import NotRegularFile
from baton.core.conversation.store import SessionStore


@pytest.mark.timeout(60)  # the copy waited on the FIFO for as long as its writer stayed
def test_a_fifo_put_in_its_place_after_its_header_was_read_is_not_copied(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = plain_store.create(title="A").session_id
    plain_store.close()
    transcript = plain_store.path_for(sid).read_bytes()
    path, twin, fifo = tmp_path / "session.jsonl", tmp_path / "twin.jsonl", tmp_path / "fifo"
    path.write_bytes(transcript)
    twin.write_bytes(transcript)
    real_header = session_files.baton_header

    def header_then_swap(name: Path) -> object:
        found = real_header(name)
        os.replace(fifo, path)  # another program puts a FIFO in the checked file's place
        return found

    monkeypatch.setattr(session_files, "baton_header", header_then_swap)
    checked_as_regular(path, monkeypatch, twin)  # a check of the name sees a regular file
    scratch = SessionStore(tmp_path / "scratch", char_count)

    def copied() -> str:
        with (
            pytest.raises(NotRegularFile) as raised,
            session_from_file(path, scratch, writable=True),
        ):
            pass
        return raised.value.strerror or ""

    try:
        taken, answers = read_of_fifo(fifo, copied)
    finally:
        scratch.close()
    assert not taken, "the FIFO was read"
    assert answers == ["a FIFO, not a regular file"]
    assert not (scratch.sessions_dir / path.name).exists()
