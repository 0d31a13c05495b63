"""A data dir on a file system that cannot sync a folder (some network and FUSE file
systems answer a directory's fsync with EINVAL): the files' own syncs are what make a
write durable there, and a session is created as anywhere else. A folder's sync that fails
otherwise (an I/O error) fails the create with `storage_error` naming the path and the
cause, never the bare OSError (an internal error over LSP), and leaves no file."""

from __future__ import annotations

import errno
import os
import random
import stat

import pytest
from test_data_dir_files import SEED, say, turns

from baton.core.conversation.store import SessionStore
from baton.core.errors import StorageError


def folders_sync_with(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(code, os.strerror(code))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("code", [errno.EINVAL, errno.EOPNOTSUPP])
def test_a_folder_that_cannot_be_synced_is_no_error(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """Every create failed with the bare OSError, "[Errno 22] Invalid argument": no
    session could be made in such a data dir."""
    folders_sync_with(monkeypatch, code)
    sid = turns(store, "synced files", 2, random.Random(SEED + 71))
    path = store.path_for(sid)
    with path.open("ab") as handle:
        handle.write(b'{"type": "mes')  # a torn last line: its copy aside syncs a folder too
    store.close()
    store.get(sid).append([say("after the torn line")])
    assert path.with_suffix(".jsonl.torn").read_bytes() == b'{"type": "mes\n'


def test_a_folder_sync_that_fails_is_named_and_leaves_no_file(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders_sync_with(monkeypatch, errno.EIO)
    with pytest.raises(StorageError) as caught:
        store.create(title="not made")
    assert caught.value.message.startswith(f"could not create {store.sessions_dir}/")
    assert caught.value.message.endswith(f": {os.strerror(errno.EIO)}")
    assert os.listdir(store.sessions_dir) == []
