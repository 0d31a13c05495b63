"""An import's transcript, written while the records are converted and put in place at the end.

The events go out in batches under a name no listing reads (`.<id>.importing` beside the
sessions), so that nothing of a conversation waits in memory for the end of the file; the
file gets its session name only once all of it made sense. What was only known at the end
(the title, the model) follows as a `meta` event when the header said otherwise.

A batch is counted and written on a thread of its own while the next one is read and
converted (one batch at most waits), and its messages are counted on `COUNT_THREADS`
threads at once: the tokenizer lets go of the GIL while it encodes. The counts are those
of counting one message after the other: each message is counted whole by the same
counter, only the order of the calls differs.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import Future, ThreadPoolExecutor

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import ApiRules
from baton.core.conversation.messages import Message
from baton.core.conversation.session import TokenCounter
from baton.core.conversation.store import SessionStore, new_session_id
from baton.core.conversation.transcript import Event, Transcript
from baton.core.importers.claude_code_repairs import Record

Entry = Message | Boundary | Record


COUNT_THREADS = 2  # threads counting a batch's messages; 1 counts them on the writer's
COUNT_SLICE = 64  # messages a counting thread takes at a time


class StagedTranscript:
    """The new session's transcript as it is written; `rules` are the API rules of the view
    written so far (each message checked once, as the view grows). `write` hands a batch to
    the writer's thread and returns; `finish` (or `abort`) waits for what is still going."""

    def __init__(self, store: SessionStore, count: TokenCounter) -> None:
        self.session_id = new_session_id()
        self.target = store.path_for(self.session_id)
        self.staging = self.target.with_name(f".{self.session_id}.importing")
        self.count = count
        self.transcript: Transcript | None = None
        self.started = False  # a first batch (with the header) was handed on
        self.header: Event = {}
        self.rules = ApiRules()
        self.events_written = 0
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="import-writer")
        self._counters = (
            ThreadPoolExecutor(COUNT_THREADS, thread_name_prefix="import-count")
            if COUNT_THREADS > 1
            else None
        )
        self._pending: Future[None] | None = None

    def write(self, entries: list[Entry], header: Event) -> None:
        """Hands the entries on to be written as events (the header first, on the first
        write), once the batch before them is written; raises what writing that one raised."""
        self.wait()
        self.started = True
        self._pending = self._writer.submit(self._write, entries, header)

    def wait(self) -> None:
        """Until the batch handed on last is written (what it raised is raised here)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _count_all(self, messages: list[Message]) -> None:
        if self._counters is None or len(messages) <= COUNT_SLICE:
            for message in messages:
                message.tokens = self.count(message)
            return

        def count_slice(start: int) -> list[int]:
            return [self.count(m) for m in messages[start : start + COUNT_SLICE]]

        starts = range(0, len(messages), COUNT_SLICE)
        counted = self._counters.map(count_slice, starts)
        for start, tokens in zip(starts, counted, strict=True):
            for message, figure in zip(messages[start : start + COUNT_SLICE], tokens, strict=True):
                message.tokens = figure

    def _write(self, entries: list[Entry], header: Event) -> None:
        """The entries as events; messages are counted and checked against the API rules
        here, once each, in the view's order."""
        for entry in entries:
            if isinstance(entry, Message):
                self.rules.add(entry)
            elif isinstance(entry, Boundary):
                self.rules = ApiRules()  # the view starts again at the summary
                for message in entry.new_messages:
                    self.rules.add(message)
        self._count_all([entry for entry in entries if isinstance(entry, Message)])
        events: list[Event] = []
        for entry in entries:
            if isinstance(entry, Message):
                events.append({"type": "message", "message": entry.wire()})
            elif isinstance(entry, Boundary):
                events.append({"type": "boundary", "boundary": entry.wire()})
            else:
                events.append({"type": "opaque", "record": entry})
        if self.transcript is None:
            self.header = header
            self.staging.unlink(missing_ok=True)  # left by an import killed at this id
            self.transcript = Transcript.create(self.staging, header)
        if events:
            self.transcript.append_many(events)
            self.events_written += len(events)
        for entry in entries:
            # written: the import is done with this copy. Emptied in place, since a counter
            # may remember the content it counted (the estimator does, by identity), which
            # would keep the whole conversation alive until the import ends
            if isinstance(entry, Message):
                entry.content.clear()
            elif isinstance(entry, Boundary):
                for message in entry.new_messages:
                    message.content.clear()

    def finish(self, title: str, model: str) -> None:
        """The last word on title and model, then the file under its session name."""
        self.wait()
        self._stop()
        assert self.transcript is not None
        changed = {
            key: value
            for key, value in (("title", title), ("model", model))
            if self.header.get(key) != value
        }
        if changed:
            self.transcript.append({"type": "meta", **changed})
        self.transcript.close()
        os.rename(self.staging, self.target)

    def abort(self) -> None:
        """Nothing of a failed import stays behind."""
        with contextlib.suppress(BaseException):  # the import failed already: that goes on
            self.wait()
        self._stop()
        if self.transcript is not None:
            self.transcript.close()
        self.staging.unlink(missing_ok=True)

    def _stop(self) -> None:
        self._writer.shutdown()
        if self._counters is not None:
            self._counters.shutdown()
