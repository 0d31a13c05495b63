"""The watch of sessions held read-only because another process writes them: it runs
only while there is one, tells the session writable once that process let go, and stops
with the service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from baton.core.conversation import writer_lock
from baton.core.service import writer_watch
from baton.core.service.events import Event, SessionChanged
from baton.core.service.service import BatonService
from baton.core.settings import Settings

GUARD = 2_000  # polls of 10 ms at most: a bound on a wait, never a pause


def service_on(data: Path) -> BatonService:
    return BatonService(Settings(data_dir=str(data)))


async def until(found: Callable[[], bool]) -> None:
    for _ in range(GUARD):
        if found():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came")


async def test_the_watch_tells_once_that_the_writer_let_go_and_takes_no_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each let-go is told once (`reload`); the session is left to whichever process opens
    it next (the writer's next server, or this one's next look), never taken by the watch."""
    monkeypatch.setattr(writer_watch, "EVERY", 0.01)
    reads: list[int] = []  # the watch's reads of the table of locks

    def write_locked() -> set[tuple[int, int]]:
        reads.append(1)
        return writer_lock.write_locked()

    monkeypatch.setattr(writer_watch, "write_locked", write_locked)
    writer, viewer = service_on(tmp_path), service_on(tmp_path)
    sid = writer.create(title="shared").session_id
    heard: list[Event] = []
    viewer.connect(heard.append)
    assert viewer.session(sid).read_only
    viewer.looked(sid)
    assert viewer.writer_watch.watching

    def reloads() -> list[SessionChanged]:
        return [e for e in heard if isinstance(e, SessionChanged) and e.reason == "reload"]

    await writer.close()  # its locks go
    await until(lambda: len(reloads()) == 1)
    assert reloads()[0].session_id == sid
    assert not reloads()[0].tell_usage  # nothing read again: no figure told

    restarted = service_on(tmp_path)  # the writer's next server: the session is its own
    assert not restarted.session(sid).read_only
    viewer.looked(sid)
    assert viewer.session(sid).read_only  # never two writers
    seen = len(reads)
    await until(lambda: len(reads) >= seen + 2)  # a whole read of the table since the open
    await restarted.close()
    await until(lambda: len(reloads()) == 2)  # its let-go told once too, nothing between

    assert not viewer.session(sid).read_only  # the next look makes the viewer the writer
    await until(lambda: not viewer.writer_watch.watching)  # none left to watch: no timer
    await viewer.close()


async def test_no_watch_without_a_session_another_process_writes(tmp_path: Path) -> None:
    service = service_on(tmp_path)
    sid = service.create(title="mine").session_id
    service.looked(sid)
    assert not service.writer_watch.watching
    await service.close()


async def test_the_watch_stops_with_the_service(tmp_path: Path) -> None:
    """Nothing may take a lock once `shutdown` is answered: the watch ends with the
    service, and a look after that starts none."""
    writer, viewer = service_on(tmp_path), service_on(tmp_path)
    sid = writer.create(title="shared").session_id
    assert viewer.session(sid).read_only
    viewer.looked(sid)
    assert viewer.writer_watch.watching
    await viewer.close()
    assert not viewer.writer_watch.watching
    viewer.writer_watch.watch()
    assert not viewer.writer_watch.watching
    await writer.close()
