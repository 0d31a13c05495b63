"""One session's heavy work off the event loop: a worker thread, one session at a time.

Each session has a lane (an asyncio lock): work sent down it runs in a worker thread
while the event loop answers every other session; work of the same session waits for the
lane, so it stays serialized. `call` runs a plain callable; `compact` runs a compaction
whose summarizer is offline (its work is all CPU): the plan and the summary in a worker
thread (on a loop of its own, progress handed back to the server's loop, a cancel passed
on) with the check of what the summary kept, then the commit on the server's loop, where
every other change of the session is made. A summarizer that asks the network stays on
the server's loop (its client is bound to it), where its waiting blocks nothing; the
span's facts are gathered in a thread (`engine`) and the check made in the lane. Python
holds one lock (the GIL) for all threads: a single long C call (a split of a 50 MB text)
still pauses the loop while it runs, so the compaction's passes over a long text go a
slice at a time (`compaction/slices.py`). `busy` tells the store which sessions have work
in their lane, so that it never closes one under that work. `repaired` makes a session's
first write's repairs down its lane when they copy over a MB.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from baton.core.background import daemon
from baton.core.compaction import engine
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.prepared_summary import PreparedSummary, check_ahead
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import Progress, Summarizer
from baton.core.compaction.working_set.held_facts import read_held
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.conversation.transcript import Transcript
from baton.core.errors import BatonError
from baton.core.usage.session_usage import compute_usage

log = logging.getLogger(__name__)

T = TypeVar("T")

OFFLINE_SUMMARIZERS = ("extractive", "memory")  # no network: all their work is CPU
REPAIR_ON_LOOP = 1 << 20  # bytes a first write's repairs copy aside on the event loop


def offline(summarizer: Summarizer) -> bool:
    return getattr(summarizer, "name", None) in OFFLINE_SUMMARIZERS


class Lanes:
    """A lane per session; work sent down one runs in a worker thread."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # id -> lock, its users
        self.closing = asyncio.Event()  # set as the process ends (`close`)

    def close(self) -> None:
        """The process ends: work cancelled in a lane no longer waits for its thread to
        stop (it writes nothing, and a held one would hold the end forever)."""
        self.closing.set()

    def busy(self, session_id: str) -> bool:
        """Whether work runs, or waits, in the session's lane."""
        return session_id in self._locks

    @contextlib.asynccontextmanager
    async def lane(self, session_id: str) -> AsyncIterator[None]:
        """The session's turn (a lane lives while anyone waits in it)."""
        lock, users = self._locks.get(session_id) or (asyncio.Lock(), 0)
        self._locks[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[session_id]
            if users > 1:
                self._locks[session_id] = (lock, users - 1)
            else:
                del self._locks[session_id]

    async def call(self, session_id: str, work: Callable[[], T]) -> T:
        """`work()` in a worker thread, after the session's earlier work."""
        async with self.lane(session_id):
            return await in_thread(work, self.closing)

    async def repaired(self, session_id: str, transcript: Transcript) -> None:
        """The repairs a session's first write makes (a torn last line cut aside to
        `.torn`, unreadable lines copied to `.bad`), made in its lane first when they copy
        over a MB: on the event loop, with a line of 200 MB another program wrote, they
        held every other session 0.8-1.8 s. A failure is left to the write, which meets it
        again and answers it."""
        if transcript.repair_pending() <= REPAIR_ON_LOOP:
            return
        try:
            await self.call(session_id, transcript.repair_now)
        except (OSError, BatonError) as exc:
            log.debug("%s: left to the write: %s", transcript.path.name, exc)

    async def run(self, session_id: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """The coroutine `make()` on a loop of its own in a worker thread, after the
        session's earlier work. Cancelled here, it is cancelled there (at its next await)
        and this returns only once the thread has stopped."""
        async with self.lane(session_id):
            return await _in_thread(make, self.closing)

    async def compact_any(
        self, session: Session, request: CompactRequest, ctx: CompactContext
    ) -> CompactResult:
        """`engine.compact`, in the session's lane when its summarizer is offline; one
        whose summarizer asks the model writes its summary on the server's loop, and
        checks it in the session's lane."""
        if offline(ctx.summarizer):
            return await self.compact(session, request, ctx)
        if request.dry_run:  # a plan only (or the offline summary's measure): no checks
            return await engine.compact(session, request, ctx)
        work = replace(ctx, progress=threadsafe(ctx.progress))
        transcript_path = ctx.history(session)

        async def summarized(asked: CompactRequest) -> CompactResult:
            view = session.view_messages()
            held, revision, files = session.held_messages(), session.revision, ctx.editor_files
            prepared = await engine.summarize(session, asked, ctx, view)

            def check() -> PreparedSummary:
                return _checked(prepared, work, transcript_path, revision, held, files is not None)

            checked = await self.call(session.session_id, check)
            return engine.commit_summary(session, checked, ctx)

        return await engine.run_compaction(session, request, ctx, summarized)

    async def compact(
        self, session: Session, request: CompactRequest, ctx: CompactContext
    ) -> CompactResult:
        """`engine.compact` with its plan and summary in the session's lane (the compaction
        hooks around it, as `engine.compact` runs them)."""
        # the plan's usage, figured here where the session changes: the thread finds it
        # remembered (compute_usage's memo) instead of reading the session as it changes
        compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
        if request.dry_run:  # changes nothing: all of it can run there, in the lane's order
            work = replace(ctx, progress=threadsafe(ctx.progress), settled=None)
            return await self.run(
                session.session_id, lambda: engine.compact(session, request, work)
            )
        work = replace(ctx, progress=threadsafe(ctx.progress))
        transcript_path = ctx.history(session)

        async def summarized(asked: CompactRequest) -> CompactResult:
            # figured again as the plan finds it (an undo asked before may have committed)
            compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
            view = session.view_messages()
            # what the commit reads from every message held (the files the session's work
            # touched, its task list and plan): read there, from a list taken here
            held, revision, files = session.held_messages(), session.revision, ctx.editor_files

            async def prepare() -> PreparedSummary:
                prepared = await engine.summarize(session, asked, work, view)
                # the checks of what it kept and dropped read the summary alone: made here too
                return _checked(prepared, work, transcript_path, revision, held, files is not None)

            prepared = await self.run(session.session_id, prepare)
            return engine.commit_summary(session, prepared, ctx)

        return await engine.run_compaction(session, request, ctx, summarized)


def _checked(
    prepared: PreparedSummary,
    ctx: CompactContext,
    transcript_path: str,
    revision: int,
    held: list[Message],
    files: bool,
) -> PreparedSummary:
    """`prepared` checked (what its summary kept and dropped, `check_ahead`) and given what
    the commit reads from every message `held` at `revision` (`read_held`), in the lane."""
    check_ahead(prepared, ctx, transcript_path)
    folders = ctx.workspace_folders
    prepared.held = read_held(revision, held, folders, files=files)
    return prepared


def threadsafe(progress: Progress | None) -> Progress | None:
    """`progress` called from a worker thread, run on the server's loop."""
    if progress is None:
        return None
    loop = asyncio.get_running_loop()

    def report(text: str, fraction: float | None) -> None:
        with contextlib.suppress(RuntimeError):  # the server's loop has closed
            loop.call_soon_threadsafe(progress, text, fraction)

    return report


async def _in_thread(
    make: Callable[[], Coroutine[Any, Any, T]], closing: asyncio.Event | None = None
) -> T:
    state: dict[str, Any] = {}
    cancelled = threading.Event()

    def thread_main() -> T:
        async def inner() -> T:
            state["loop"], state["task"] = asyncio.get_running_loop(), asyncio.current_task()
            if cancelled.is_set():
                raise asyncio.CancelledError
            return await make()

        return asyncio.run(inner())

    future = _daemon(thread_main)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancelled.set()
        loop, task = state.get("loop"), state.get("task")
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # its loop has ended already
                loop.call_soon_threadsafe(task.cancel)
        await _stopped(future, closing)  # nothing of it runs after the cancel is answered
        raise


def _daemon(work: Callable[[], T]) -> asyncio.Future[T]:
    """`work()` in a daemon thread of its own (`background.daemon`): an `exit` during a
    long compaction, render, page or undo check ends the process, the work dropped before
    anything was committed (the thread writes nothing)."""
    return daemon(work, "baton-lane")


async def off_loop(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread, outside any lane (a request's input counted before it
    goes on); cancelled, this returns at once, the thread left to end on its own. Only for
    work that writes nothing: an `exit` ends the process without waiting for it."""
    return await _daemon(work)


async def in_thread(work: Callable[[], T], closing: asyncio.Event | None = None) -> T:
    """`work()` in a daemon thread (the caller holds the lane it belongs to); cancelled,
    this waits for the thread to end, then re-raises. Only for work that writes nothing
    (a render, a page): an `exit` ends the process without waiting for it."""
    return await _finished(_daemon(work), closing)


async def stoppable(
    work: Callable[[threading.Event], T], closing: asyncio.Event | None = None
) -> T:
    """`work(stop)` in a daemon thread (the caller holds the lane it belongs to);
    cancelled, this sets `stop`, for the work to end at its next step, waits for the
    thread to end, then re-raises: a long check cancelled frees the lane soon after. Only
    for work that writes nothing (an undo's check): an `exit` does not wait for it."""
    stop = threading.Event()
    future = _daemon(partial(work, stop))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        await _stopped(future, closing)
        raise


async def _finished(future: asyncio.Future[T], closing: asyncio.Event | None) -> T:
    """The thread's result; cancelled, this waits for the thread to end, then re-raises."""
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        await _stopped(future, closing)
        raise


async def _stopped(future: asyncio.Future[Any], closing: asyncio.Event | None) -> None:
    """Once the cancelled work's thread has ended, or the process ends (`closing` set):
    its daemon thread writes nothing, and is not waited for then."""
    waits: set[asyncio.Future[Any]] = {future}
    if closing is not None:
        waits.add(asyncio.ensure_future(closing.wait()))
    with contextlib.suppress(BaseException):
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for waiting in waits - {future}:
        waiting.cancel()
