"""A sessions folder another program swaps for a link (moved out, a link left in its place)
while a create makes a session in it: the create made what the link led to private (chmod
0700) and wrote the new session's file there, outside the data dir, and failed with an
internal error (EBADF: the file's descriptor closed twice), for the check was of the name
and the chmod and the create each followed the name again. The folder checked is the
folder used now: opened without following a link, made private and written by its
descriptor."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation import folders, transcript
from baton.core.conversation.store import SessionStore
from baton.core.errors import StorageError


def _swap(store: SessionStore, shared: Path) -> None:
    store.sessions_dir.rename(store.sessions_dir.with_name("moved"))
    store.sessions_dir.symlink_to(shared)


def _at_the_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    real = folders.linked_folder

    def checked_then_swapped(folder: Path) -> str | None:
        found = real(folder)
        if found is None:  # seen as a folder, then swapped
            swap()
        return found

    monkeypatch.setattr(folders, "linked_folder", checked_then_swapped)


def _at_the_create(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    real = transcript.open_regular

    def swapped_then_created(*args: Any, **kwargs: Any) -> int:
        swap()
        return real(*args, **kwargs)

    monkeypatch.setattr(transcript, "open_regular", swapped_then_created)


@pytest.mark.parametrize("when", [_at_the_check, _at_the_create])
def test_a_folder_swapped_for_a_link_is_neither_made_private_nor_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    when: Callable[[pytest.MonkeyPatch, Callable[[], None]], None],
) -> None:
    store = SessionStore(tmp_path / "data", lambda m: 1)
    store.create("first")  # the sessions folder exists, private
    store.close()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    done: list[bool] = []

    def swap_once() -> None:
        if not done:
            _swap(store, shared)
            done.append(True)

    when(monkeypatch, swap_once)

    with pytest.raises(StorageError) as caught:
        store.create("second")
    assert done, "never swapped"
    assert str(store.sessions_dir) in caught.value.message
    assert "symbolic link" in caught.value.message
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755, "made private through the link"
    assert list(shared.iterdir()) == [], "written through the link"
    assert len(list((tmp_path / "data" / "moved").iterdir())) == 1  # the first session only


def test_a_file_beside_the_sessions_is_not_written_through_a_folder_swapped_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction's draft or the session notes (`replace_beside`): the check found a
    folder, the file was then written beside it by name, through the link."""
    store = SessionStore(tmp_path / "data", lambda m: 1)
    session = store.create("first")
    store.close()
    shared = tmp_path / "shared"
    shared.mkdir()
    _at_the_check(monkeypatch, lambda: _swap(store, shared))
    draft = store.sessions_dir / f"{session.session_id}.draft.json"

    with pytest.raises(StorageError) as caught:
        folders.replace_beside(draft, b"{}")
    assert "symbolic link" in caught.value.message
    assert list(shared.iterdir()) == [], "written through the link"
