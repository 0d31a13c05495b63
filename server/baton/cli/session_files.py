"""Session files the command line reads: Baton transcripts and Claude Code session files."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from baton.core.conversation.files import open_read
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript
from baton.core.conversation.transcript_read import baton_header, headless_transcript
from baton.core.importers.claude_code import ImportReport, import_with_report

log = logging.getLogger(__name__)


@dataclass
class LoadedFile:
    session: Session
    kind: str  # "baton" or "claude-code"
    imported: ImportReport | None = None


@contextmanager
def session_from_file(path: Path, store: SessionStore, *, writable: bool) -> Iterator[LoadedFile]:
    """A session read from `path`, which is never changed: a Claude Code file is imported
    into `store` (a scratch data directory); a Baton transcript is opened read-only in
    place, or, when `writable`, copied into `store` first."""
    if baton_header(path) is None and not headless_transcript(path):
        session, report = import_with_report(path, store)
        yield LoadedFile(session, "claude-code", report)
        return
    if writable:
        copy = store.sessions_dir / path.name  # what its warnings and errors name
        copy.parent.mkdir(parents=True, exist_ok=True)
        # the file opened is the one copied, checked as it is opened: another program may
        # have put a FIFO in place of the file checked (read, it would hold the command)
        with open_read(path) as source, copy.open("wb") as target:
            shutil.copyfileobj(source, target)
        path = copy
    else:  # a link the user names is followed, as for a Claude Code file
        path = path.resolve()
    transcript = Transcript.open(path, writable=writable)
    try:
        session = Session(transcript, store.count)
        if session.damage.header_missing:  # a header lost or torn: read as it is
            log.warning("%s: the transcript has no valid header line; read as it is", path.name)
        told = set(transcript.report.problems)  # the lines told as the file was read
        for problem in session.load_problems:
            if problem not in told:  # a record that is JSON but not a valid one, skipped
                log.warning("%s: %s", path.name, problem)
        yield LoadedFile(session, "baton")
    finally:
        transcript.close()


def save_copy(session: Session, store: SessionStore, sid: str, **header: str) -> Session:
    """A copy of `session`'s whole transcript as session `sid` (a new id) of `store` (the
    header's other fields, plus `header`, kept), written in one durable append."""
    events = session.transcript.events()
    first = {**next(events), **header, "sessionId": sid}
    transcript = Transcript.create(store.path_for(sid), first)
    try:
        transcript.append_many(events)
    except BaseException:
        transcript.close()
        store.path_for(sid).unlink(missing_ok=True)
        raise
    transcript.close()
    return store.get(sid)
