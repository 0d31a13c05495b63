"""A list made while another process creates or removes a session. A file being created is
there, empty or with half its header, for as long as the header takes to be written and
synced: it was listed as a damaged, read-only session with no title, and stayed so in that
list (the other process's client showed a broken session until it listed again); it is
left out until its header is written, the creator's lock on it telling a create in
progress from an empty file nobody writes (listed as damaged, as before). A file removed
while the list reads it is left out too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation import listing
from baton.core.conversation.listing import Summary
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript


def _count(message: object) -> int:
    return 1


def listed(store: SessionStore) -> dict[str, Session | Summary]:
    return {s.session_id: s for s in store.list()}


@pytest.mark.parametrize("written", [0, 20])  # bytes of the header on disk at the list
def test_a_session_being_created_elsewhere_is_not_listed_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: int
) -> None:
    creator = SessionStore(tmp_path, _count)
    viewer = SessionStore(tmp_path, _count)  # another process's: its own descriptors
    creator.create("there before")
    seen: list[dict[str, Session | Summary]] = []
    real_append = Transcript.append

    def append(transcript: Transcript, event: dict[str, Any]) -> None:
        if event.get("type") == "session" and not seen:  # the header, not yet written
            transcript.path.write_bytes(b'{"type": "session", "format": 1}'[:written])
            seen.append(listed(viewer))
            os.truncate(transcript.path, 0)
        real_append(transcript, event)

    monkeypatch.setattr(Transcript, "append", append)
    new = creator.create("new one").session_id
    [during] = seen
    assert new not in during or not during[new].damage.any, "listed as damaged"
    assert len(during) == 1  # the session there before, still listed
    after = listed(viewer)[new]
    assert after.title == "new one" and not after.damage.any
    creator.close()
    viewer.close()


def test_an_empty_file_nobody_writes_is_still_listed_as_damaged(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, _count)
    store.create("one")
    store.close()
    (store.sessions_dir / "s_empty.jsonl").write_bytes(b"")
    found = listed(store)["s_empty"]
    assert found.read_only and found.damage.header_missing
    store.close()


def test_an_empty_file_opened_here_is_still_listed_as_damaged(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, _count)
    store.create("one")
    (store.sessions_dir / "s_empty.jsonl").write_bytes(b"")
    assert store.get("s_empty").damage.header_missing
    found = listed(store)["s_empty"]
    assert found.read_only and found.damage.header_missing
    store.close()


def test_a_session_file_removed_while_the_list_reads_it_is_not_listed_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removed between the folder's entry seen and the file opened (another program's rm,
    a save that removes the file before writing it again): it was listed as a damaged,
    read-only session with no title, "cannot be read: [Errno 2] No such file or
    directory: '...'"."""
    store = SessionStore(tmp_path, _count)
    kept = store.create("kept").session_id
    gone = store.create("gone").session_id
    store.close()
    real = listing.summarize

    def removed_first(path: str, *args: Any, **kwargs: Any) -> Any:
        if path.endswith(f"{gone}.jsonl"):
            os.unlink(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(listing, "summarize", removed_first)
    assert [(s.session_id, s.damage.any) for s in store.list()] == [(kept, False)]
    store.close()
