"""A session's state rebuilt from its transcript: messages, the view, boundaries, damage
(a compaction's records and those that do not fit: `replay_compactions.py`).

Replay applies each event in order. A transcript that lost records (see `damage.py`) is
replayed a second time with the view repaired wherever it changes wholesale (at each
boundary and undo, and at the end), so that what was planned from a repaired view
applies again as it did then.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.damage import Damage, mismatch_note
from baton.core.conversation.messages import Message, share_bookkeeping
from baton.core.conversation.meta_records import only_placement
from baton.core.conversation.recorded_usage import LastUsage, LearnedUsage
from baton.core.conversation.replay_compactions import ReplayedCompactions
from baton.core.conversation.replayed_view import TokenCounter
from baton.core.conversation.session_fields import SessionFields
from baton.core.conversation.thinking_sent import has_thinking
from baton.core.conversation.transcript import Event, Transcript
from baton.core.conversation.view_state import ViewState

# Revisions are drawn from one count for the whole process, so that none ever repeats: a
# session read again (another program changed its file) or opened again after it was
# closed must never meet a figure a cache kept under a revision of the state before.
_REVISIONS = itertools.count(1)


class Replayed(ReplayedCompactions, SessionFields):
    """The state of one session as its transcript's events left it."""

    def __init__(
        self,
        transcript: Transcript,
        count: TokenCounter,
        *,
        session_id: str | None = None,
        written: Iterable[Event] | None = None,
        own_requests: bool = False,
    ) -> None:
        """`session_id`: the id the file's name gives (a store's session); its header must
        name the same one, or the session is damaged and read-only. `written`: the file's
        events as this process wrote them, all of them (an import's, whose transcript is
        the one that wrote them), a message event's model with its bookkeeping shared
        (`share_bookkeeping`): replayed instead of reading the file again. `own_requests`:
        every request that goes on with it is Baton's own (`ReplayedView.own_requests`)."""
        self.own_requests = own_requests  # before the replay: it settles usages
        self.transcript = transcript
        self.count = count
        self.expected_id = session_id
        self.compacting = False  # set by the compaction engine while one runs
        self._replay(repairing=False, written=written)
        if self.damage.any:
            # Replay again, repairing the view at every point where it changes wholesale,
            # so that boundaries planned from a repaired view apply as they did then.
            self._replay(repairing=True)
        self.load_problems.extend(transcript.report.problems)
        if self.damage.any and not self.read_only:
            self.transcript.keep_aside(self._bad_records)
        self._bad_records.clear()  # the transcript has them, or never writes them: not kept here

    def _replay(self, *, repairing: bool, written: Iterable[Event] | None = None) -> None:
        self._reset_fields()
        self.deleted = False
        self.messages: dict[str, Message] = {}
        self.view: list[str] = []
        self.boundaries: dict[str, Boundary] = {}
        self.active: list[str] = []  # committed, not undone, oldest first
        self._known_at: dict[str, int] = {}  # boundary id -> messages known when it came
        self.opaque: list[dict[str, Any]] = []
        self.load_problems: list[str] = []
        self.damage = Damage()
        self.id_mismatch = False  # the header names another session than the file name
        self._repairing = repairing
        self._bad_records: list[bytes] = []
        self._prefix_marks: dict[str, bytes] = {}
        self.holds_thinking = False  # some reply of it thought (`thinking_sent.py`)
        # a microcompaction undone since the last reply: the results it brought back stay
        self.microcompact_undone = False
        self._learned: LearnedUsage | None = None  # the newest usage, not estimated yet
        self._learn_at: int | None = None  # the view's newest usage record, not learned yet
        self._last_usage: LastUsage | None = None
        self._undone = None  # the undo `uncompact` checked, as it writes it
        # the views a replay makes are framed once kept (`_keep_views`): most of a long
        # compacted session's are replaced by a later compaction, and never read
        self._replaying = True
        self._state = ViewState(framed=False)
        # moves on with every event applied (what a cache keys on); never repeats
        self.revision = next(_REVISIONS)
        # each event is applied as it is read and dropped after: the session keeps what
        # the events built, never the events themselves
        events = self.transcript.events() if written is None else iter(written)
        try:
            self._replay_events(events, repairing=repairing)
        finally:
            self._keep_views()

    def _replay_events(self, events: Iterator[Event], *, repairing: bool) -> None:
        first = next(events, None)
        header = first or {}
        if header.get("type") != "session" or not isinstance(header.get("sessionId"), str):
            self.damage.header_missing = True
            self.session_id = self.transcript.path.stem
        elif not header["sessionId"]:
            self.damage.header_missing = True
        if first is not None:
            self._apply(first)
        self._apply_all(events)
        self._lost_behind_boundaries()
        self.damage.lines += len(self.transcript.report.bad_lines)  # known once all is read
        if repairing:
            self._repair()
        if self.damage.header_missing:
            self.session_id = self.transcript.path.stem
        if self.expected_id is not None and self.session_id != self.expected_id:
            self.damage.notes.append(mismatch_note(self.session_id, self.expected_id))
            self.id_mismatch = True
            self.session_id = self.expected_id  # the file name is the id

    def _keep_views(self) -> None:
        """The replay's views that stay (the session's, and the one its newest usage
        covered) framed now, off the event loop, and every later one as it is made."""
        self._replaying = False
        self._state.framed()
        if self._learned is not None:
            self._learned.state.framed()

    @property
    def read_only(self) -> bool:
        """Another process writes this session, Baton may not write its file, or the file
        has no valid header or one naming another session (nothing is written into such a
        file)."""
        return self.transcript.read_only or self.damage.header_missing or self.id_mismatch

    @property
    def header(self) -> Event | None:
        """The transcript's first event (its session header when healthy)."""
        return self.transcript.header

    def _apply_all(self, events: Iterable[Event]) -> None:
        """Apply `events` in order. Of a run of messages that join the view, only the last
        usage record is learned (`_learn`), once the run ends: each learned replaces the one
        before, and nothing reads it while the run goes on."""
        try:
            for event in events:
                self._apply(event)
        finally:
            self._learn_pending()

    def _apply(self, event: Event) -> None:
        self.revision = next(_REVISIONS)
        kind = event.get("type")
        if kind == "message" and not event.get("replace"):  # most of a transcript: told first
            raw = event.get("message")
            message = raw if type(raw) is Message else self._load_message(raw)
            if message is None:
                return
            if message.id in self.messages:
                # a line written twice: applied again it would stand twice in the view
                self._skipped(event, f"a repeated message record ({message.id})")
            else:
                self._add_to_view(message)
            stamp = message.created_at
            if stamp:
                self._saw_time(str(stamp))
            return
        if kind != "opaque":  # (a record Baton keeps, not reads: the view is as it was)
            self._learn_pending()  # learned from the view as the messages before left it
        at = event.get("at") or event.get("createdAt")
        if kind == "session":
            if self.session_id:
                return  # a header is the first line; another one is not a header
            self._apply_header(event)
        elif kind == "message":  # one that replaces a message
            message = self._load_message(event.get("message"))
            if message is None:
                return
            at = message.created_at
            if message.id in self.messages:
                _ = self.last_usage  # estimated from the message it replaces
                self.messages[message.id] = message
                self._state = ViewState(self.view_messages())
                if message.anchors_usage and message.id in self.view:
                    self._learn(self.view.index(message.id))
            else:
                self._add_to_view(message)
        elif kind == "boundary":
            self._apply_boundary(event)
            boundary = event.get("boundary")
            at = boundary.get("createdAt") if isinstance(boundary, dict) else None
        elif kind == "uncompact":
            self._apply_uncompact(event, str(event.get("boundaryId")))
        elif kind == "pin":
            target = self.messages.get(str(event.get("messageId")))
            if target is not None:
                target.pinned = bool(event.get("pinned"))
        elif kind == "meta":
            self._apply_meta(event, len(self.messages))
            if only_placement(event):
                at = None
        elif kind == "deleted":
            self.deleted = True
        elif kind == "opaque":
            self.opaque.append(event.get("record") or {})
        if at:
            self._saw_time(str(at))

    def _load_message(self, raw: Any) -> Message | None:
        if type(raw) is Message:  # the model written (`written`): checked and shared
            return raw
        try:
            # the model's validator, called as model_validate calls it, without that call
            # around it: a load validates every message record
            return share_bookkeeping(Message.__pydantic_validator__.validate_python(raw))
        except ValidationError as exc:
            self._unreadable({"type": "message", "message": raw}, "message", exc)
            return None

    def _add_to_view(self, message: Message) -> None:
        self.messages[message.id] = message
        mark = self._state.add(message)
        self.view.append(message.id)
        if message.role != "assistant":
            return  # (a user's message neither thinks nor anchors a usage)
        self.microcompact_undone = False
        thinking = has_thinking(message)
        if thinking:
            self.holds_thinking = True
        if message.anchors_usage:
            self._prefix_marks[message.id] = mark
            self._learn_at = len(self.view) - 1  # learned when the run of messages ends
        elif thinking:
            self._prefix_marks[message.id] = mark  # its thinking goes back while it holds
