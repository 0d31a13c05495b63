"""The data dir that other programs touch (issue 26): odd names in `sessions/`, links that
lead out of it, a torn tail on a full disk, a read-only data dir, files that swapped names.

Nothing here reads anything but a regular file, writes through a link or outside the data
dir, writes on a read-only request, or cuts a torn line it could not first copy in full."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import stat
from pathlib import Path

import pytest
from test_compaction_drafts import conversation

from baton.core.compaction.result import CompactRequest
from baton.core.conversation import files
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams, SessionLocked, StorageError
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.services import service_on

SEED = int(os.environ.get("BATON_SEED", "20261201"))


def say(text: str, mid: str | None = None) -> MessageInput:
    return MessageInput(id=mid, role="user", content=text)


def reply(text: str, mid: str | None = None) -> MessageInput:
    return MessageInput(id=mid, role="assistant", content=text)


def turns(store: SessionStore, title: str, n: int, rng: random.Random) -> str:
    session = store.create(title=title)
    for i in range(n):
        words = " ".join(rng.choice(["data", "dir", "link", "fifo", "tail"]) for _ in range(9))
        session.append([say(f"{title} {i} {words}"), reply(words[::-1])])
    return session.session_id


def swapped(store: SessionStore, seed: int) -> tuple[str, str]:
    """Sessions A (1 turn) and B (2 turns), closed, with their files swapped: A's name
    holds B's transcript and B's name A's."""
    rng = random.Random(seed)
    a, b = turns(store, "A", 1, rng), turns(store, "B", 2, rng)
    store.close()
    pa, pb = store.path_for(a), store.path_for(b)
    pa.rename(pa.with_suffix(".tmp"))
    pb.rename(pa)
    pa.with_suffix(".tmp").rename(pb)
    return a, b


def torn(path: Path) -> bytes:
    tail = b'{"type": "meta", "title": "half' + b"x" * 300_000
    with path.open("ab") as handle:
        handle.write(tail)
    return tail


# ---- odd entries (item 2) -------------------------------------------------------------------


@pytest.mark.timeout(60)  # the old list never came back from the FIFO
def test_odd_names_in_sessions_are_listed_as_damaged_and_never_read(
    store: SessionStore, tmp_path: Path
) -> None:
    sid = turns(store, "healthy", 2, random.Random(SEED))
    store.close()
    folder = store.sessions_dir
    os.mkfifo(folder / "s_fifo.jsonl")
    (folder / "s_zero.jsonl").symlink_to("/dev/zero")
    (folder / "s_dir.jsonl").mkdir()
    outside = tmp_path / "outside.jsonl"
    shutil.copyfile(folder / f"{sid}.jsonl", outside)
    (folder / "s_out.jsonl").symlink_to(outside)

    listed = {s.session_id: s for s in store.list()}

    assert set(listed) == {sid, "s_fifo", "s_zero", "s_dir", "s_out"}
    assert not listed[sid].damage.any and listed[sid].title == "healthy"
    for odd, kind in [
        ("s_fifo", "a FIFO"),
        ("s_zero", "a symbolic link"),
        ("s_dir", "a directory"),
        ("s_out", "a symbolic link"),
    ]:
        assert listed[odd].read_only and listed[odd].damage.any
        assert any(kind in note for note in listed[odd].damage.describe()), odd
        with pytest.raises(StorageError, match=kind):
            store.get(odd)
    assert store.open_ids() == []  # the list opened none


def test_open_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "file").write_bytes(b"x")
    for name, kind in [("fifo", "a FIFO"), ("link", "a symbolic link")]:
        with pytest.raises(StorageError, match=kind):
            files.open_regular(tmp_path / name, os.O_RDONLY)
    os.close(files.open_regular(tmp_path / "file", os.O_RDONLY))


# ---- reading never writes (item 3) -----------------------------------------------------------


def test_a_list_never_repairs_through_a_link_out_of_the_data_dir(
    store: SessionStore, tmp_path: Path
) -> None:
    sid = turns(store, "target", 2, random.Random(SEED + 1))
    store.close()
    outside = tmp_path / "elsewhere" / "t.jsonl"
    outside.parent.mkdir()
    shutil.move(store.sessions_dir / f"{sid}.jsonl", outside)
    torn(outside)
    before = outside.read_bytes()
    (store.sessions_dir / "s_link.jsonl").symlink_to(outside)

    store.list()
    with pytest.raises(StorageError):
        store.get("s_link")
    with pytest.raises(InvalidParams, match="already exists"):
        store.create(session_id="s_link")

    assert outside.read_bytes() == before
    assert sorted(p.name for p in outside.parent.iterdir()) == ["t.jsonl"]


def test_reading_a_torn_session_writes_nothing_until_it_is_written(store: SessionStore) -> None:
    sid = turns(store, "torn", 2, random.Random(SEED + 2))
    store.close()
    path = store.path_for(sid)
    tail = torn(path)
    before = path.read_bytes()

    store.list()
    session = store.get(sid)
    assert len(session.view) == 4
    assert path.read_bytes() == before  # a read-only request wrote nothing
    assert not path.with_suffix(".jsonl.torn").exists()

    session.append([say("after")])
    assert path.with_suffix(".jsonl.torn").read_bytes() == tail + b"\n"
    assert path.read_bytes().startswith(before[: -len(tail)])
    store.close()
    assert len(store.get(sid).view) == 5


# ---- a torn tail on a full disk (item 6) ------------------------------------------------------


@pytest.mark.parametrize("failure", ["short-then-enospc", "enospc"])
def test_a_torn_tail_that_cannot_be_copied_in_full_is_never_cut(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    sid = turns(store, "full", 1, random.Random(SEED + 3))
    store.close()
    path = store.path_for(sid)
    tail = torn(path)
    before = path.read_bytes()
    aside = path.with_suffix(".jsonl.torn")
    real_write = os.write

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".torn"):
            if failure == "short-then-enospc" and len(data) > 98_304:
                return real_write(fd, bytes(data[:98_304]))  # the disk takes part...
            raise OSError(errno.ENOSPC, "No space left on device")  # ... then no more
        return real_write(fd, data)

    session = store.get(sid)
    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(StorageError, match="No space left on device") as caught:
        session.append([say("lost?")])
    assert str(path) in caught.value.message and "nothing was cut" in caught.value.message
    assert path.read_bytes() == before  # nothing cut, nothing written
    assert not aside.exists() or aside.read_bytes() == b""  # no partial copy left

    monkeypatch.setattr(os, "write", real_write)  # the disk has room again
    session.append([say("kept")])
    assert aside.read_bytes() == tail + b"\n"
    store.close()
    assert [m.text() for m in store.get(sid).view_messages()][-1] == "kept"


# ---- a read-only or unwritable data dir (item 9) ---------------------------------------------


def read_only_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every open that would write fails as on a read-only file system."""
    real_open = os.open

    def open_(path: object, flags: int, mode: int = 0o777, **kw: object) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, mode, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: not mode & os.W_OK)
    real_statvfs = os.statvfs

    class ReadOnly:
        def __init__(self, path: object) -> None:
            self.f_flag = real_statvfs(path).f_flag | os.ST_RDONLY  # type: ignore[arg-type]

    monkeypatch.setattr(os, "statvfs", ReadOnly)


def test_a_read_only_data_dir_serves_its_sessions_read_only_and_says_why(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = turns(store, "ro", 2, random.Random(SEED + 4))
    store.close()
    path = store.path_for(sid)
    before = path.read_bytes()
    read_only_disk(monkeypatch)

    problems = store.access_problems()
    assert len(problems) == 1 and str(store.sessions_dir) in problems[0]
    assert "Read-only file system" in problems[0] and "read-only" in problems[0]
    assert [(s.session_id, s.read_only) for s in store.list()] == [(sid, True)]
    session = store.get(sid)
    assert session.read_only and len(session.view) == 4
    with pytest.raises(StorageError, match="Read-only file system") as caught:
        session.append([say("no")])
    assert str(path) in caught.value.message
    with pytest.raises(StorageError, match="Read-only file system") as created:
        store.create(title="new")
    assert str(store.sessions_dir) in created.value.message
    assert path.read_bytes() == before


def test_a_sessions_folder_made_read_only_is_not_made_writable_by_a_create(
    store: SessionStore,
) -> None:
    """A create made the folder private by setting it to 0700, which gave its owner the
    write a `chmod a-w` had taken: the start and a look said new sessions cannot be
    created there, and New Chat then made one. Private now takes from the group and the
    others only (the create fails where the OS says so: not as root, who may write)."""
    sid = store.create(title="kept").session_id
    store.sessions_dir.chmod(0o555)
    try:
        with contextlib.suppress(StorageError):  # the OS refuses it unless root
            store.create(title="new")
        assert stat.S_IMODE(store.sessions_dir.stat().st_mode) == 0o500
    finally:
        store.sessions_dir.chmod(0o700)
    assert sid in {s.session_id for s in store.list()}


def test_a_data_dir_that_cannot_exist_is_named_with_its_cause(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    store = SessionStore(blocker / "data", lambda m: 1)
    problems = store.access_problems()
    assert len(problems) == 1 and str(blocker) in problems[0]
    with pytest.raises(StorageError) as caught:
        store.create(title="new")
    assert str(blocker) in caught.value.message and "Not a directory" in caught.value.message
    assert store.list() == []


def test_a_writable_data_dir_has_no_problems(store: SessionStore) -> None:
    assert store.access_problems() == []
    store.create()
    assert store.access_problems() == []


# ---- the file name is the id (item 10) -------------------------------------------------------


def test_swapped_files_answer_by_their_names_and_are_damaged(store: SessionStore) -> None:
    a, b = swapped(store, SEED + 5)

    got = store.get(a)
    assert got.session_id == a and got.read_only
    assert any("names session" in note for note in got.damage.describe())
    with pytest.raises(SessionLocked):
        got.append([say("into the wrong file")])
    listed = {s.session_id: s for s in store.list()}
    assert set(listed) == {a, b}
    assert all(s.damage.any and s.read_only for s in listed.values())


def test_a_copied_file_is_listed_once_under_each_name(store: SessionStore) -> None:
    a = turns(store, "A", 1, random.Random(SEED + 6))
    store.close()
    shutil.copyfile(store.path_for(a), store.sessions_dir / "s_copy.jsonl")

    listed = [s.session_id for s in store.list()]
    assert sorted(listed) == sorted([a, "s_copy"])
    copy = next(s for s in store.list() if s.session_id == "s_copy")
    assert copy.damage.any and copy.read_only
    original = next(s for s in store.list() if s.session_id == a)
    assert not original.damage.any
    assert store.get("s_copy").session_id == "s_copy"


async def test_a_send_or_a_draft_in_a_read_only_data_dir_says_why_it_cannot_write(
    tmp_path: Path,
    estimator: Estimator,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both said the session was 'open ... in another Baton process', where PROTOCOL has a
    change in a read-only data dir fail with storage_error, saying why."""
    service = service_on(tmp_path / "data", estimator)
    sid = service.create("ro").session_id
    await service.close()
    path = tmp_path / "data" / "sessions" / f"{sid}.jsonl"
    before = path.read_bytes()
    read_only_disk(monkeypatch)
    service = service_on(tmp_path / "data", estimator)
    try:
        fake_anthropic.reply("never asked for")
        with pytest.raises(StorageError, match="Read-only file system"):
            await service.replies.send(sid, "hello")
        with pytest.raises(StorageError, match="Read-only file system"):
            await service.drafts.preview(sid, CompactRequest("all"))
    finally:
        await service.close()
    assert fake_anthropic.requests == [] and path.read_bytes() == before


async def test_a_compaction_in_a_data_dir_whose_name_is_not_utf8_commits(tmp_path: Path) -> None:
    """The summary names the transcript that holds the full history, and a byte of the
    path that is not UTF-8 (a lone surrogate in Python) failed every compaction at its
    commit: 'the record holds text that cannot be written as UTF-8 ... newMessages[0]'."""
    data = tmp_path / os.fsdecode(b"data-\xe9")
    service = BatonService(Settings(data_dir=str(data), summarizer="extractive"))
    try:
        sid = conversation(service, turns=40)
        result = await service.compaction.compact(sid, CompactRequest("all"))
        summary = service.session(sid).view_messages()[0]
        assert result.summary is not None and summary.kind == "summary"
        assert "data-\\xe9" in summary.text()
    finally:
        await service.close()
