"""An import cancelled while it reads its file, or once it has written it, as a client's
cancel lands, and what it leaves in the sessions folder: shared by the import tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers import claude_code
from baton.core.importers.claude_code import ImportReport, import_off_loop


def left_in(store: SessionStore) -> list[str]:
    folder = store.sessions_dir
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


async def cancelled_midway(
    path: Path, store: SessionStore, monkeypatch: pytest.MonkeyPatch, shares: int
) -> list[float | None]:
    """`import_off_loop` of `path` into `store`, cancelled as the client would once it has
    been told `shares` shares of the file read; the fractions it was told. The reader
    waits there for the cancel to arrive (else a fast machine finishes the file first)."""
    real = claude_code.import_session

    def paced(*args: Any, progress: Any = None, cancel: Any = None, **kwargs: Any) -> Any:
        told: set[int] = set()

        def read(done: int, total: int) -> None:
            progress(done, total)
            told.add(done * 100 // max(total, 1))
            if len(told) == shares:
                cancel.wait(10)

        return real(*args, progress=read, cancel=cancel, **kwargs)

    monkeypatch.setattr(claude_code, "import_session", paced)
    task: asyncio.Task[tuple[Session, ImportReport]] | None = None
    seen: list[float | None] = []

    def progress(message: str, fraction: float | None) -> None:
        seen.append(fraction)
        if task is not None and len(seen) == shares:
            task.cancel()  # the client's cancel, while the file is being read

    task = asyncio.ensure_future(import_off_loop(path, store, progress=progress))
    with pytest.raises(asyncio.CancelledError):
        await task
    return seen


async def cancelled_once_written(
    path: Path,
    store: SessionStore,
    monkeypatch: pytest.MonkeyPatch,
    written: Callable[[Session], None] = lambda session: None,
) -> None:
    """`import_off_loop` of `path` into `store`, cancelled once the import has written and
    opened its session (told to `written`, in the import's thread), before its answer
    reaches the waiting task."""
    loop = asyncio.get_running_loop()
    task: asyncio.Task[tuple[Session, ImportReport]] | None = None
    done = claude_code.import_session

    def finished_then_cancelled(*args: Any, **kwargs: Any) -> Any:
        found = done(*args, **kwargs)
        written(found[0])
        assert task is not None
        finished = threading.Event()
        loop.call_soon_threadsafe(lambda: (task.cancel(), finished.set()))
        finished.wait(10)  # the cancel reaches the task before the thread's answer does
        return found

    monkeypatch.setattr(claude_code, "import_session", finished_then_cancelled)
    task = asyncio.ensure_future(import_off_loop(path, store))
    with pytest.raises(asyncio.CancelledError):
        await task
