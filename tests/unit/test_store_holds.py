"""The store and the locks of other holders (issue 26): a list says a session is read-only
when another process (or another store) holds its writer lock, as `get` does, without
taking a lock itself; the least recently used session the store closes is never one that
work still holds (a lane's heavy work, a reply streaming)."""

from __future__ import annotations

import asyncio
import fcntl
import os
from pathlib import Path

import pytest

from baton.core.conversation import writer_lock
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.errors import StorageError
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator


def _count(message: object) -> int:
    return 1


def test_a_list_sees_a_session_another_holder_writes(tmp_path: Path) -> None:
    mine = SessionStore(tmp_path, _count)
    theirs = SessionStore(tmp_path, _count)  # its own descriptors: its locks conflict
    held = theirs.create("held elsewhere")
    free = mine.create("mine")
    mine.release(free.session_id)  # not open here any more: listed from the index
    listed = {s.session_id: s for s in mine.list()}
    assert listed[held.session_id].read_only
    assert not listed[free.session_id].read_only
    looker = SessionStore(tmp_path, _count)
    assert looker.get(held.session_id).read_only  # what `get` says too
    looker.close()
    theirs.release(held.session_id)  # let go: writable again for the next list
    assert not {s.session_id: s for s in mine.list()}[held.session_id].read_only
    mine.close()
    theirs.close()


def test_the_lock_is_seen_without_taking_one(tmp_path: Path) -> None:
    """Reading the kernel's table takes no lock: a writer that opens meanwhile gets its own."""
    path = tmp_path / "f"
    path.write_text("x")
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        st = os.fstat(fd)
        assert (st.st_dev, st.st_ino) in writer_lock.write_locked()
        fcntl.flock(fd, fcntl.LOCK_UN)
        assert (st.st_dev, st.st_ino) not in writer_lock.write_locked()
    finally:
        os.close(fd)


def test_a_session_read_while_the_store_ends_is_let_go(tmp_path: Path) -> None:
    """A session a worker thread read (its writer lock taken) while the store let go of
    every session was kept, and held until the process ended: another process found it
    "open for writing in another Baton process". Once the store has ended it keeps none."""
    store = SessionStore(tmp_path, _count)
    sid = store.create("read as it ends").session_id
    store.close()
    read = store.load(sid)  # as a get in a worker thread reads it
    store.end()
    with pytest.raises(StorageError, match="was not opened: Baton let go of"):
        store.adopt(read)  # kept as that get keeps it
    with pytest.raises(StorageError):
        store.get(sid)
    other = SessionStore(tmp_path, _count)
    assert not other.get(sid).read_only
    other.close()


def test_a_closed_service_opens_no_session_again(tmp_path: Path) -> None:
    """A closed service (the server's shutdown) opened a session asked of it after the
    close (work of a request the shutdown then cancelled) in a store of its own, its lock
    held until the process ended."""
    service = BatonService(Settings(data_dir=str(tmp_path)), estimator=Estimator())
    sid = service.create().session_id
    asyncio.run(service.close())
    with pytest.raises(StorageError):
        service.session(sid)
    other = SessionStore(tmp_path, _count)
    assert not other.get(sid).read_only
    other.close()


def _service(tmp_path: Path) -> BatonService:
    service = BatonService(Settings(data_dir=str(tmp_path)), estimator=Estimator())
    service.store.max_open = 1
    return service


def test_a_session_in_its_lane_is_not_closed_by_others_opening(tmp_path: Path) -> None:
    service = _service(tmp_path)
    busy = service.create("busy").session_id

    async def others_meanwhile() -> list[str]:
        async with service.lanes.lane(busy):
            for n in range(3):
                service.create(f"other {n}")
            return service.store.open_ids()

    assert busy in asyncio.run(others_meanwhile())
    service.create("after")  # the lane is free: the least recently used goes now
    assert busy not in service.store.open_ids()


def test_a_session_streaming_a_reply_is_not_closed(tmp_path: Path) -> None:
    service = _service(tmp_path)
    busy = service.create("replying").session_id
    runtime = service._runtimes.get(busy)
    assert runtime is not None
    runtime.replying = True
    for n in range(3):
        service.create(f"other {n}")
    assert busy in service.store.open_ids()


def test_a_session_closed_here_reads_what_another_store_wrote_meanwhile(
    tmp_path: Path,
) -> None:
    """A session the store closed to stay within max_open, and that its holder still
    keeps, is read again when it is opened again if another process wrote it meanwhile:
    the holder's object (never two of one) shows that process's turns, and the next write
    lands after them instead of failing with transcript_changed."""
    mine = SessionStore(tmp_path, _count, max_open=1)
    held = mine.create("a")
    held.append([MessageInput(role="user", content="first")])
    mine.create("b")  # `a` is closed here: its lock let go, its object still held
    assert held.session_id not in mine.open_ids()
    theirs = SessionStore(tmp_path, _count)
    theirs.get(held.session_id).append(
        [
            MessageInput(role="assistant", content="theirs"),
            MessageInput(role="user", content="more"),
        ]
    )
    theirs.close()

    again = mine.get(held.session_id)

    assert again is held
    assert [m.text() for m in again.view_messages()] == ["first", "theirs", "more"]
    again.append([MessageInput(role="assistant", content="mine")])
    fresh = SessionStore(tmp_path, _count)
    assert [m.text() for m in fresh.get(held.session_id).view_messages()] == [
        "first",
        "theirs",
        "more",
        "mine",
    ]
    fresh.close()
    mine.close()


def test_a_session_closed_here_and_untouched_is_not_read_again(tmp_path: Path) -> None:
    mine = SessionStore(tmp_path, _count, max_open=1)
    held = mine.create("a")
    held.append([MessageInput(role="user", content="first")])
    revision = held.revision
    mine.create("b")
    assert mine.get(held.session_id) is held
    assert held.revision == revision  # nothing replayed: the file is as it left it
    mine.close()


def test_a_session_read_again_as_it_opens_again_is_told_as_a_reload(tmp_path: Path) -> None:
    """The store closed a session to stay within max_open while its runtime kept it; another
    process wrote it meanwhile: opening it again reads those turns, and that is a change no
    event told, so the meter and the session document hear it as one (`reload`)."""
    from baton.core.service.events import Event, SessionChanged

    service = _service(tmp_path)
    sid = service.create("a").session_id
    service.append(sid, [MessageInput(role="user", content="first")])
    service.create("b")  # `a` is closed here; its runtime still holds it
    assert sid not in service.store.open_ids()
    theirs = SessionStore(tmp_path, _count)
    theirs.get(sid).append([MessageInput(role="assistant", content="theirs")])
    theirs.close()
    heard: list[Event] = []
    service.connect(heard.append)

    usage = service.usage(sid)

    changes = [e for e in heard if isinstance(e, SessionChanged) and e.session_id == sid]
    assert [c.reason for c in changes] == ["reload"]
    assert [m.text() for m in service.session(sid).view_messages()] == ["first", "theirs"]
    assert changes[0].usage.used_tokens == usage.used_tokens
    heard.clear()
    service.usage(sid)  # open now: nothing read again, nothing told
    assert not [e for e in heard if isinstance(e, SessionChanged)]
    service.store.close()
