"""An import's transcript, written while the records are converted and put in place at the end.

The events go out in batches under a name no listing reads (`.<id>.importing` beside the
sessions), so that nothing of a conversation waits in memory for the end of the file; the
file gets its session name only once all of it made sense. What was only known at the end
(the title, the model) follows as a `meta` event when the header said otherwise.
"""

from __future__ import annotations

import os

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import ApiRules
from baton.core.conversation.messages import Message
from baton.core.conversation.session import TokenCounter
from baton.core.conversation.store import SessionStore, new_session_id
from baton.core.conversation.transcript import Event, Transcript
from baton.core.importers.claude_code_repairs import Record

Entry = Message | Boundary | Record


class StagedTranscript:
    """The new session's transcript as it is written; `rules` are the API rules of the view
    written so far (each message checked once, as the view grows)."""

    def __init__(self, store: SessionStore, count: TokenCounter) -> None:
        self.session_id = new_session_id()
        self.target = store.path_for(self.session_id)
        self.staging = self.target.with_name(f".{self.session_id}.importing")
        self.count = count
        self.transcript: Transcript | None = None
        self.header: Event = {}
        self.rules = ApiRules()
        self.events_written = 0

    def write(self, entries: list[Entry], header: Event) -> None:
        """The entries as events (the header first, on the first write); messages are
        counted and checked against the API rules here, once each, in the view's order."""
        events: list[Event] = []
        for entry in entries:
            if isinstance(entry, Message):
                self.rules.add(entry)
                entry.tokens = self.count(entry)
                events.append({"type": "message", "message": entry.wire()})
            elif isinstance(entry, Boundary):
                self.rules = ApiRules()  # the view starts again at the summary
                for message in entry.new_messages:
                    self.rules.add(message)
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
        if self.transcript is not None:
            self.transcript.close()
        self.staging.unlink(missing_ok=True)
