"""An import's transcript, written while the records are converted and put in place at the end.

The events go out in batches under a name no listing reads (`.<id>.importing` beside the
sessions), so that no more than two batches of records wait to be written, never the whole
file; the file gets its session name only once all of it made sense. The new session is
replayed from the events as written (`opened`), with the very messages written: what the
session would hold once read, without reading the file again. What was only
known at the end (the title, the model, how much of the file was read) follows as a `meta`
event when the header said otherwise. Only what may end up in the view is counted: the
turns a later compaction summarized, or a later rewind took out, are written without a
token count (`StagedTranscript.write`).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Container
from pathlib import Path

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.files import storage_error, sync_dir
from baton.core.conversation.invariants import ApiRules
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session, TokenCounter
from baton.core.conversation.session_names import new_session_id
from baton.core.conversation.shared_bookkeeping import share, share_keys
from baton.core.conversation.store import SessionStore
from baton.core.conversation.summary_entry import Entry as SummaryEntry
from baton.core.conversation.transcript import Event, Transcript
from baton.core.conversation.wire_nulls import keeps_no_null
from baton.core.importers.claude_code_repairs import Record
from baton.core.memory import loading

Entry = Message | Boundary | Record
MESSAGE_AS_IS = keeps_no_null(Message)  # see `encode`
ABANDONED_AFTER = 60.0  # seconds without a write, and no writer's lock: a staged file left


class _Every:
    """The view of a writer told nothing of it: every message counts as in it."""

    def __contains__(self, _: object) -> bool:
        return True


EVERY: Container[str] = _Every()


class StagedTranscript:
    """The new session's transcript as it is written; `rules` are the API rules of the view
    written so far (each message checked once, as the view grows)."""

    def __init__(self, store: SessionStore, count: TokenCounter) -> None:
        self.session_id = new_session_id()
        self.store = store
        self.target = store.path_for(self.session_id)
        self.staging = self.target.with_name(f".{self.session_id}.importing")
        remove_abandoned(self.target.parent, time.time())
        self.count = count
        self.transcript: Transcript | None = None
        self.header: Event = {}
        self.rules = ApiRules()
        self.events_written = 0
        self.held: list[Entry] = []  # written at the next write, or by `finish`
        # every event written, in order, the header first: the session is replayed from
        # them (`opened`); what a message event holds is the model written, kept
        self.written: list[Event] = []
        # the list's entry of the file, given each event as written (`finish` hands it over)
        self.summary = SummaryEntry(0, 0)

    def write(self, entries: list[Entry], header: Event, view: Container[str] = EVERY) -> None:
        """The entries as events, in order (the header first, on the first write); each
        message of the view they leave is checked against the API rules here, once, in the
        view's order (one a later compaction among them replaced, never).

        A message is counted only when it may end up in the session's view. The entries
        after the last compaction are held back until the next write: when a compaction
        follows among its entries, they are out of the view and are written without a count
        (counted when they come back into a view or are shown: `ReplayedView._mark_view`,
        `ReplayedView.with_counts`); otherwise they are written then, counted if still in
        `view` (the ids of the view as the converter has it now: a rewind since, an edited
        prompt's or another conversation's, took the others out, and nothing an import
        writes brings them back). So the final view is always counted, and at most two
        batches are held at once."""
        last, compaction = _last_compaction(entries)
        if compaction is not None:
            # the view starts again at its summary: the messages before it are out of the
            # view, and no rule looks at them again
            self.rules = ApiRules().extend(compaction.new_messages)
        for entry in entries[last + 1 :]:
            if isinstance(entry, Message):
                self.rules.add(entry)
            # an edited prompt's rewind keeps the view up to it: the rules go on, and the
            # prompt that follows closes the turn as any prompt does
        if self.transcript is None:
            self.header = header
            self.staging.unlink(missing_ok=True)  # left by an import killed at this id
            self.transcript = Transcript.create(self.staging, header)
            self.written.append(header)
            self.summary.written([header])
        if last >= 0:
            self._emit([*self.held, *entries[: last + 1]], counted=False)
            self.held = entries[last + 1 :]
        else:
            self._emit(self.held, counted=True, view=view)
            self.held = entries

    def _emit(self, entries: list[Entry], *, counted: bool, view: Container[str] = EVERY) -> None:
        """Write `entries`; with `counted`, each message of `view` with its token count (a
        summary a boundary brings was counted when it was made)."""
        assert self.transcript is not None
        events: list[Event] = []
        boundaries: list[Boundary] = []
        for entry in entries:
            if isinstance(entry, Message):
                if counted and entry.id in view:
                    entry.tokens = self.count(entry)
                    share((entry,))  # the count gave it a fields set of its own
                # the model itself: `encode` writes its wire form with no dict made of it,
                # and the session holds it (its bookkeeping shared, as a load shares it;
                # it and its usage were made so: `claude_code_models.message`, `usage`)
                wired = _shared(entry) if MESSAGE_AS_IS else entry.wire()
                events.append({"type": "message", "message": wired})
            elif isinstance(entry, Boundary):
                events.append({"type": "boundary", "boundary": entry.wire()})
                boundaries.append(entry)
            else:
                events.append({"type": "opaque", "record": entry})
        if events:
            self.transcript.append_many(events)
            self.events_written += len(events)
            self.written.extend(events)
            self.summary.written(events)
        for boundary in boundaries:
            # a boundary's messages are written as a dict made of them, which the session
            # reads: these copies are emptied in place, since a counter may remember the
            # content it counted (the estimator does, by identity)
            for message in boundary.new_messages:
                message.content.clear()

    def finish(
        self, title: str, model: str, size: int, fingerprint: str, view: Container[str] = EVERY
    ) -> None:
        """The held entries of the final `view` counted and all written, the last word on
        title, model and the bytes of the file read (`importedSize`, `importedFingerprint`),
        then the file under its session name."""
        assert self.transcript is not None
        self._emit(self.held, counted=True, view=view)
        self.held = []
        last_word = (
            ("title", title),
            ("model", model),
            ("importedSize", size),
            ("importedFingerprint", fingerprint),
        )
        changed = {key: value for key, value in last_word if self.header.get(key) != value}
        if changed:
            self.transcript.append({"type": "meta", **changed})
            self.written.append({"type": "meta", **changed})
            self.summary.written(self.written[-1:])
        # renamed while this transcript holds the file and its lock: no other writer came
        # between its writes and the session `opened` replays from them
        try:
            os.rename(self.staging, self.target)
            self.transcript.path = self.target  # what `abort` removes, should the sync fail
            # synced, as a session's creation is: else a crash of the machine could bring
            # the file back under its staged name, which a later import removes as abandoned
            sync_dir(self.target.parent)
        except OSError as exc:
            raise storage_error("put in place", self.target, exc) from None
        st = self.transcript.file_state()  # None: changed since by another process
        if st is not None:  # the list's entry made from what was written, not read again
            self.store.note_written(self.session_id, st, self.summary)

    def opened(self) -> Session:
        """The new session (after `finish`), replayed from the events as this transcript
        wrote them: the state a read of its file gives, without reading it again."""
        assert self.transcript is not None
        written, self.written = self.written, []
        try:
            with loading():
                return Session(
                    self.transcript, self.count, session_id=self.session_id, written=written
                )
        except BaseException:
            self.transcript.close()  # the file stays, a session read as any other is
            raise

    def abort(self) -> None:
        """Nothing of a failed import stays behind (under either name)."""
        path = self.staging
        if self.transcript is not None:
            self.transcript.close()
            path = self.transcript.path
        path.unlink(missing_ok=True)


def remove_abandoned(folder: Path, now: float) -> None:
    """The staged files that imports killed midway left in `folder` (a server's process
    ended while it imported; a cancel or a failure removes its own): no writer holds their
    lock, and none wrote to them for `ABANDONED_AFTER` seconds (a file just made is locked
    only after it is created)."""
    for path in folder.glob(".*.importing"):
        try:
            if now - path.lstat().st_mtime < ABANDONED_AFTER:
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while its import writes
            path.unlink()
        except OSError:
            pass
        finally:
            os.close(fd)


def _shared(message: Message) -> Message:
    """`message` with its blocks' bookkeeping shared, as `share_bookkeeping` shares it
    (validated or built as the records were converted, they were not made so)."""
    share(message.content)
    for block in message.content:
        share_keys(block)
    return message


def _last_compaction(entries: list[Entry]) -> tuple[int, Boundary | None]:
    """The place of the last compaction among `entries` and the compaction (-1 and None
    when there is none), looked for from their end."""
    for n in range(len(entries) - 1, -1, -1):
        entry = entries[n]
        if isinstance(entry, Boundary) and _replaces_view(entry):  # a call for a boundary only
            return n, entry
    return -1, None


def _replaces_view(entry: Entry) -> bool:
    """A compaction: its summary stands for the view before it (an edited prompt's rewind
    keeps the view up to the prompt it replaces, which is still to be counted; a
    microcompaction keeps the view, with copies of some results, counted when made)."""
    return isinstance(entry, Boundary) and entry.direction not in ("rewind", "microcompact")
