"""Import of Claude Code session files (JSONL, or the JSON-array variant) into a session."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from baton.core.background import daemon
from baton.core.conversation.listing import SESSION_ID
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.conversation.session_names import checked_title
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript_read import baton_header, headless_transcript
from baton.core.errors import InvalidParams
from baton.core.importers import claude_code_read as read
from baton.core.importers.claude_code_branches import ParentChains
from baton.core.importers.claude_code_cancel import stopped, unanswered
from baton.core.importers.claude_code_facts import Facts
from baton.core.importers.claude_code_read import MAX_IMPORT_BYTES, ImportCancelled, Progress
from baton.core.importers.claude_code_records import RecordConverter
from baton.core.importers.claude_code_repairs import in_uuids
from baton.core.importers.claude_code_report import ImportReport
from baton.core.importers.claude_code_write import StagedTranscript
from baton.core.importers.earlier_imports import (
    ImportClaim,
    another_copy,
    changed_since,
    imports_among,
    imports_of,
)
from baton.core.importers.import_path import named_file
from baton.core.memory import collector_paused, let_go_of

__all__ = [
    "MAX_IMPORT_BYTES",
    "ImportCancelled",
    "ImportClaim",
    "ImportReport",
    "another_copy",
    "changed_since",
    "import_claude_code",
    "import_off_loop",
    "import_session",
    "import_with_report",
    "imports_among",
    "imports_of",
    "named_file",
]

StepProgress = Callable[[str, float | None], None]  # (what is being done, fraction done)
Forget = Callable[[Iterable[str]], None]  # the counts of these messages dropped


def import_claude_code(
    path: Path,
    store: SessionStore,
    *,
    title: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Session:
    """A new session holding the conversation of a Claude Code session file."""
    return import_with_report(path, store, title=title, progress=progress, cancel=cancel)[0]


def import_with_report(
    path: Path,
    store: SessionStore,
    *,
    title: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> tuple[Session, ImportReport]:
    """The new session, opened, and what the import found (see `import_session`)."""
    session, report = import_session(path, store, title=title, progress=progress, cancel=cancel)
    return store.adopt(session), report


async def import_off_loop(
    path: Path,
    store: SessionStore,
    *,
    title: str | None = None,
    progress: StepProgress | None = None,
    closing: asyncio.Event | None = None,
    forget: Forget | None = None,
) -> tuple[Session, ImportReport]:
    """The import in a daemon thread of its own, so that the event loop answers other
    requests meanwhile: the new session and what the import found. `progress(message,
    fraction read)` is called on the loop, once per percent, and once more as the new
    session is opened; a second read of the file (two conversations written at once) says
    its percent in the message, the fraction None: a progress bar never goes back.
    Cancelling the awaiting task stops the thread at its next record; the cancellation goes
    on once the thread has removed what it wrote (a file it finished meanwhile is removed
    too: it was never answered), or, once the process ends (`closing` set), after at most
    `ENDING_WAIT` seconds: a read held (a file on a hung network mount) never holds the
    process's end, what its thread staged is left for a later import to remove
    (`remove_abandoned`). The new session is made in the thread as well (a big one's
    replay would hold the loop); the store is changed on the loop only (`adopt`)."""
    loop = asyncio.get_running_loop()
    cancel = threading.Event()
    shown = -1

    def tell(message: str, fraction: float | None) -> None:  # from the thread, run on the loop
        if progress is not None:
            with contextlib.suppress(RuntimeError):  # a loop that closed meanwhile
                loop.call_soon_threadsafe(progress, message, fraction)

    again = False  # read a second time: the fraction shown stays where the first read ended

    def read(done: int, total: int) -> None:
        nonlocal shown, again
        percent = done * 100 // max(total, 1)
        if percent < shown:
            again = True
        if percent != shown:
            shown = percent
            if again:
                tell(f"Reading {path.name} again, for two conversations in it: {percent}%", None)
            else:
                tell(f"Reading {path.name}", percent / 100)

    def opened() -> None:
        tell("Opening the imported session", 1.0)

    def import_and_open() -> tuple[Session, ImportReport]:
        return import_session(
            path, store, title=title, progress=read, cancel=cancel, opening=opened, forget=forget
        )

    work = daemon(import_and_open, "baton-import")
    try:
        session, report = await asyncio.shield(work)
    except asyncio.CancelledError:
        cancel.set()
        # done before it saw the cancel (now, or after the process's end stopped waiting
        # for it): never answered, removed
        work.add_done_callback(unanswered)
        await stopped(work, closing)
        raise
    return store.adopt(session), report


def import_session(
    path: Path,
    store: SessionStore,
    *,
    title: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    opening: Callable[[], None] | None = None,
    forget: Forget | None = None,
) -> tuple[Session, ImportReport]:
    """The file read and converted one record at a time, its events written in batches to
    a file no listing reads, which becomes the session only when all of it made sense: a
    failure or `cancel` leaves nothing behind. The session, not kept by `store` (`adopt`
    keeps it), is replayed from the events as written, not read again (`opening()` is
    called first). Time and memory are linear in the file: every record is looked at
    once, and only the batch being converted is held beside what the session will hold
    (the messages written), without the cyclic collector (`collector_paused`: its full
    collections would walk the whole process again and again, a second of a 100 MB
    import, holding up every other session meanwhile). Nothing of `store` but its paths
    and its counter is used (safe off the loop)."""
    given = checked_title(title) if title is not None and title.strip() else None  # as create
    header, headless = None, False
    try:
        header = baton_header(path)
        headless = header is None and headless_transcript(path)
    except OSError:
        pass  # the read says why it cannot be read
    if header is not None or headless:  # a session's own file: no Claude Code record in it
        sid = (header or {}).get("sessionId")
        named = f" (session {sid})" if isinstance(sid, str) and SESSION_ID.fullmatch(sid) else ""
        named = " whose first line is no valid header" if headless else named
        raise InvalidParams(
            f"{path.name} is a Baton transcript{named}, not a Claude Code session file: "
            "nothing to import"
        )
    with collector_paused():
        staged, report = _import_to_file(path, store, given, progress, cancel, forget)
        if opening is not None:
            opening()
        # opened with the collector still off: what the import made and the session keeps
        # is frozen out of its walks (`loading`) before it is back on, else its first
        # collection would walk all of it (0.26 s for the bench's 100 MB file)
        return staged.opened(), report


def _import_to_file(
    path: Path,
    store: SessionStore,
    title: str | None,
    progress: Progress | None,
    cancel: threading.Event | None,
    forget: Forget | None,
) -> tuple[StagedTranscript, ImportReport]:
    """The file converted; read a second time, when it holds two conversations written
    at once, the one Claude Code does not resume left out of the view."""
    found = _convert(path, store, title, progress, cancel, forget, None)
    if isinstance(found, frozenset):
        found = _convert(path, store, title, progress, cancel, forget, found)
    assert isinstance(found, tuple)
    return found


def _convert(
    path: Path,
    store: SessionStore,
    title: str | None,
    progress: Progress | None,
    cancel: threading.Event | None,
    forget: Forget | None,
    beside: frozenset[str] | None,
) -> tuple[StagedTranscript, ImportReport] | frozenset[str]:
    """The session made of the file, with the records of `beside` out of its view; with
    `beside` None, nothing written but the uuids of another conversation written at the
    same time as the one Claude Code resumes, when the file holds one
    (`ParentChains.beside`)."""
    report = ImportReport(source=str(path))
    reading = read.Reading(report.broken_lines)
    counted: set[str] = set()  # the messages counted: `forget` drops their counts

    def count(message: Message) -> int:
        counted.add(message.id)
        return store.count(message)

    builder = RecordConverter(report, count, beside or frozenset(), reading)
    facts = Facts(title)
    chains = ParentChains() if beside is None else None
    staged = StagedTranscript(store, count)
    written_at, since = 0, 0  # bytes of the file read at the last write, records since
    kept = False
    try:
        for record, at in read.records(path, reading, progress, cancel):
            report.records += 1
            if not beside or not in_uuids(record, beside):  # its model, its title not
                facts.add(record)
            if chains is not None:
                chains.add(record)
            builder.add(record)
            since += 1
            due = since >= FLUSH_RECORDS or at - written_at >= FLUSH_BYTES
            # the header, written first, says when the conversation began: once known
            if due and (staged.transcript is not None or facts.first_time is not None):
                facts.size, facts.fingerprint = reading.taken, reading.edges.fingerprint()
                header = facts.header(staged.session_id, path)
                staged.write(builder.take(), header, frozenset(builder.view))
                written_at, since = at, 0
        builder.finish()
        report.array = reading.array
        if report.messages == 0 and report.sidechain:  # agent-<id>.jsonl
            raise InvalidParams(
                f"{path.name} holds only a subagent's conversation ({report.sidechain} "
                "sidechain records), a part of the session that ran the subagent: use that "
                "session's file"
            )
        if report.messages == 0:
            raise InvalidParams(f"{path.name} holds no Claude Code conversation records")
        other = chains.beside() if chains is not None else frozenset()
        if other:  # written in file order, mixed: read again, leaving it out
            return other
        # what was read, not the size when the import began
        facts.size, facts.fingerprint = reading.taken, reading.edges.fingerprint()
        view = frozenset(builder.view)
        staged.write(builder.take(final=True), facts.header(staged.session_id, path), view)
        report.problems.extend(staged.rules.problems)  # none, unless a repair missed
        report.tool_pairs = builder.tool_pairs
        staged.finish(facts.title(), facts.model, facts.size, facts.fingerprint, view)
        kept = True
    finally:  # what the read built, let go of a step at a time: other threads run between
        if not kept:  # failed, cancelled or read again: nothing of it stays, on disk or in
            staged.abort()  # memory (an exception's frames keep the holders, left empty)
            let_go_of(staged, report)
            if forget is not None:  # nor the counts of its messages, which hold them
                forget(counted)
        let_go_of(builder, chains, facts)
    return staged, report


FLUSH_RECORDS = 20_000  # records converted between two writes, at most
FLUSH_BYTES = 8 * 1024 * 1024  # or this much of the file read
