"""A data dir Baton may not read (issue 26): a transcript made unreadable (`chmod 000`), or
its folder made unsearchable (`chmod a-x sessions`), while the server runs. Every look at
it answers `storage_error` naming the path and the cause, never an internal error or "no
such session"; the list names it as damaged and lists the others.

The permissions are played by failing the calls (tests may run as root, whom `chmod`
does not stop), as the OS fails them for another user."""

from __future__ import annotations

import errno
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_data_dir_files import SEED, say, turns

from baton.core.conversation.store import SessionStore
from baton.core.errors import StorageError

DENIED = os.strerror(errno.EACCES)


def denied(path: object) -> PermissionError:
    return PermissionError(errno.EACCES, DENIED, os.fspath(path))  # type: ignore[arg-type]


def unreadable_file(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """`chmod 000 path`: every open of it fails; its folder still lists and stats it."""
    real_open = os.open

    def open_(name: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if os.fspath(name) == str(path):
            raise denied(name)
        return real_open(name, flags, mode, **kw)

    monkeypatch.setattr(os, "open", open_)


class Unsearchable:
    """A directory entry of a folder that may be read, not searched: its name lists, its
    stat fails."""

    def __init__(self, entry: os.DirEntry[str]) -> None:
        self.name, self.path = entry.name, entry.path

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        raise denied(self.path)


def unsearchable_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """`chmod a-x folder`: its names list, but nothing in it can be stat'ed or opened."""
    real_lstat, real_scandir, real_open = os.lstat, os.scandir, os.open

    def inside(name: Any) -> bool:
        return Path(os.fspath(name)).parent == folder

    def lstat(name: Any, **kw: Any) -> os.stat_result:
        if inside(name):
            raise denied(name)
        return real_lstat(name, **kw)

    def open_(name: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if inside(name):
            raise denied(name)
        return real_open(name, flags, mode, **kw)

    class Listing:
        def __init__(self, name: Any) -> None:
            self.entries = real_scandir(name)
            self.hidden = Path(os.fspath(name)) == folder

        def __enter__(self) -> Listing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.entries.close()

        def __iter__(self) -> Iterator[Any]:
            for entry in self.entries:
                yield Unsearchable(entry) if self.hidden else entry

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "scandir", Listing)


def test_an_unreadable_transcript_is_named_with_its_cause(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A get or a delete of it failed with the bare PermissionError (an internal error
    over LSP, with neither the path nor the cause)."""
    rng = random.Random(SEED + 51)
    sid, other = turns(store, "locked out", 2, rng), turns(store, "fine", 1, rng)
    store.close()
    path = store.path_for(sid)
    unreadable_file(monkeypatch, path)

    listed = {s.session_id: s for s in store.list()}
    assert listed[sid].read_only
    # in the OS's words, as for a folder that cannot be searched: it said "[Errno 13]
    # Permission denied: '<path>'", Python's way of printing the error
    assert listed[sid].damage.notes[0] == f"{sid}.jsonl cannot be read: {DENIED}"
    for look in (store.get, store.delete):
        with pytest.raises(StorageError) as caught:
            look(sid)
        assert caught.value.message == f"could not read {path}: {DENIED}"
    store.get(other).append([say("still written")])


def test_a_folder_that_cannot_be_searched_is_named_with_its_cause(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list failed whole with the bare PermissionError, and a get answered "no
    session" for a session whose file is there."""
    sid = turns(store, "behind a folder", 1, random.Random(SEED + 52))
    store.close()
    unsearchable_folder(monkeypatch, store.sessions_dir)

    listed = store.list()
    assert [(s.session_id, s.read_only) for s in listed] == [(sid, True)]
    assert listed[0].damage.notes == [f"{sid}.jsonl cannot be read: {DENIED}"]
    with pytest.raises(StorageError) as caught:
        store.get(sid)
    assert caught.value.message == f"could not read {store.path_for(sid)}: {DENIED}"


def test_a_folder_made_unsearchable_while_a_session_is_held_is_named_at_its_append(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check before an append (that the file held is still the one at its path) failed
    with the bare PermissionError, an internal error over LSP."""
    session = store.get(turns(store, "held", 1, random.Random(SEED + 53)))
    path = session.transcript.path
    before = path.read_bytes()
    unsearchable_folder(monkeypatch, store.sessions_dir)

    with pytest.raises(StorageError) as caught:
        session.append([say("not written")])
    assert caught.value.message == f"could not write {path}: {DENIED}"
    monkeypatch.undo()
    assert path.read_bytes() == before


def test_a_file_where_the_sessions_folder_goes_is_named_at_a_create(tmp_path: Path) -> None:
    """A file where the sessions folder should be (another program's, or the folder moved
    away and a file left) made a create answer "could not create a session in
    .../sessions: File exists", which sends a user looking for a session file. It says
    that the path is not a directory, as the start's warning does."""
    data_dir = tmp_path / "data"
    store = SessionStore(data_dir, lambda _: 1)
    store.create("before")
    store.close()
    blocker = data_dir / "sessions"
    os.rename(blocker, tmp_path / "moved")
    blocker.write_text("not a folder")

    with pytest.raises(StorageError) as raised:
        SessionStore(data_dir, lambda _: 1).create("after")

    assert f"{blocker} is not a directory" in raised.value.message
    assert "File exists" not in raised.value.message


def unsearchable_data_dir(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    """`chmod a-x data_dir` (or 000): nothing under it can be looked up, its sessions
    folder included."""
    real_lstat, real_stat, real_open = os.lstat, os.stat, os.open

    def under(name: Any) -> bool:
        return not isinstance(name, int) and data_dir in Path(os.fspath(name)).parents

    def lstat(name: Any, **kw: Any) -> os.stat_result:
        if under(name):
            raise denied(name)
        return real_lstat(name, **kw)

    def stat_(name: Any, **kw: Any) -> os.stat_result:
        if under(name) and kw.get("dir_fd") is None:
            raise denied(name)
        return real_stat(name, **kw)

    def open_(name: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if under(name) and kw.get("dir_fd") is None:
            raise denied(name)
        return real_open(name, flags, mode, **kw)

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "stat", stat_)
    monkeypatch.setattr(os, "open", open_)


def test_a_data_dir_that_cannot_be_searched_is_named_with_its_cause(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made unsearchable while the server ran, the data dir made a list, a create and
    the start's check fail with the bare PermissionError (an internal error over LSP,
    neither the path nor the cause said)."""
    sid = turns(store, "behind the data dir", 1, random.Random(SEED + 54))
    store.close()
    unsearchable_data_dir(monkeypatch, store.data_dir)
    said = f"could not read {store.sessions_dir}: {DENIED}"

    problems = store.access_problems()
    assert problems == [f"data dir {store.data_dir}: {said}; sessions cannot be listed or kept"]
    for look in (store.list, lambda: store.create(title="new"), lambda: store.get(sid)):
        with pytest.raises(StorageError) as caught:
            look()
        assert caught.value.message == said
    monkeypatch.undo()
    assert [s.session_id for s in store.list()] == [sid]
