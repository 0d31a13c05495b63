"""A session: its transcript replayed into the model's current view; append, commit, undo."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from baton.core.conversation.append_batch import (
    INTERRUPTED,
    AppendResult,
    checked_batch,
    prepared_messages,
)
from baton.core.conversation.boundary import NOT_COMPACTIONS, Boundary
from baton.core.conversation.messages import Message, MessageInput, now_iso
from baton.core.conversation.meta_records import AutoPause
from baton.core.conversation.replay import Replayed
from baton.core.conversation.replayed_view import TokenCounter
from baton.core.conversation.transcript import Event, Transcript
from baton.core.conversation.undo_check import Checked, check_placed
from baton.core.conversation.view_tokens import ViewTokens
from baton.core.errors import (
    InvalidParams,
    MessageNotFound,
    NothingToCompact,
    SessionLocked,
    SessionNotFound,
    StorageError,
    TranscriptChanged,
    TranscriptError,
)

# INTERRUPTED and AppendResult live in append_batch.py; callers read them from here
__all__ = ["INTERRUPTED", "AppendResult", "Session", "TokenCounter"]


class Session(ViewTokens):
    """One conversation. Every change is written to the transcript before it is applied."""

    # called once a write found the file changed and read the session again from it (the
    # service tells front ends the state the disk holds now); set by its runtime
    read_again: Callable[[], None] | None = None

    # ---- reading -------------------------------------------------------------------------

    @property
    def compactions(self) -> int:
        return sum(1 for b in self.active if self.boundaries[b].direction not in NOT_COMPACTIONS)

    def held_messages(self) -> list[Message]:
        """Every message the session holds, in order, but those an active rewind took out:
        what the conversation still stands on (a compaction's summarized turns are in, an
        edited prompt's abandoned turns are not). The task list and plan are read here."""
        rewound = {
            mid
            for b in self.active
            if self.boundaries[b].direction == "rewind"
            for mid in self.boundaries[b].summarized_ids
        }
        return [m for m in self.messages.values() if m.id not in rewound]

    def get(self, message_id: str) -> Message:
        try:
            return self.messages[message_id]
        except KeyError:
            raise MessageNotFound(
                f"no message {message_id!r} in session {self.session_id}"
            ) from None

    def index_in_view(self, message_id: str) -> int:
        self.get(message_id)
        try:
            return self.view.index(message_id)
        except ValueError:
            raise MessageNotFound(
                f"message {message_id!r} is not in the current view (it was compacted)"
            ) from None

    def unpaired_tool_calls(self) -> list[tuple[str, str]]:
        """(message id, problem) for each tool_use of the view nobody answered (except the
        trailing turn's, whose results are about to come) and each orphaned result."""
        awaiting = {u.id for u in self._state.api_rules(self.view_messages).unanswered()}
        return self._state.tool_pairs(self.view_messages).problems(awaiting)

    # ---- changing ------------------------------------------------------------------------

    def append(self, inputs: Sequence[MessageInput | Message]) -> AppendResult:
        """Validate the whole batch, repair unanswered tool calls, then write it at once.

        When another program changed the file since it was read (a safe-save's copy and
        rename), the session is read again and the batch, checked against what the disk
        now holds, is written into the file that is there."""
        try:
            return self._append(inputs)
        except TranscriptChanged:
            if self.read_only:
                raise
            return self._append(inputs)

    def _append(self, inputs: Sequence[MessageInput | Message]) -> AppendResult:
        if not inputs:
            raise InvalidParams("messages must not be empty")
        rules = self._state.api_rules(self.view_messages).fork()
        batch, result = checked_batch(inputs, rules, self.messages, self.count)
        self._write([{"type": "message", "message": m.wire()} for m in batch])
        return result

    def replace_message(self, message: Message) -> None:
        """Record a new version of a message (a streamed reply that finished)."""
        self.get(message.id)
        message.tokens = self.count(message)
        self._write([{"type": "message", "message": message.wire(), "replace": True}])

    def commit_boundary(self, boundary: Boundary) -> None:
        """Commit a compaction as one transcript line; the view follows it."""
        for message in boundary.new_messages:
            if not message.tokens:
                message.tokens = self.count(message)
        self._write([{"type": "boundary", "boundary": boundary.wire()}])

    def undo_target(
        self, boundary_id: str | None = None, among: Collection[str] | None = None
    ) -> str:
        """The boundary an undo of `boundary_id` undoes (default: the latest, of `among`
        when given: those in force when the undo was asked), refused as `uncompact` refuses
        before it checks the undo itself."""
        self.refuse_if_read_only()
        active = self.active if among is None else [b for b in self.active if b in among]
        if not active and boundary_id is None:
            raise NothingToCompact("this session has no compaction to undo")
        target = active[-1] if boundary_id is None else boundary_id  # "" names none
        if target not in self.active:  # a named one, whether or not another is in force
            raise InvalidParams(f"no active compaction {target!r} in this session")
        return target

    def uncompact(self, boundary_id: str | None = None, checked: Checked | None = None) -> Boundary:
        """Undo one compaction (default: the latest), keeping every later turn. `checked`:
        its check made before (`undo_check.checked`, off the event loop), which stands
        while the session is at the revision it was made at."""
        target = self.undo_target(boundary_id)
        if checked is None or (checked.revision, checked.target) != (self.revision, target):
            checked = Checked(self.revision, target, self.view, *check_placed(self, target))
        # the view the undo gives, worked out once: its record's replay takes it as it is
        self._undone = checked
        try:
            self._write([{"type": "uncompact", "boundaryId": target, "at": now_iso()}])
        finally:
            self._undone = None
        return self.boundaries[target]

    def rewind(self, message_id: str) -> Boundary:
        """Take message `message_id` and everything after it out of the view (to edit a
        prompt and send it again, or to retry a reply), as one boundary line: the messages
        stay in the transcript, and undoing the boundary puts them back."""
        self.refuse_if_read_only()
        view = list(self.view)
        if message_id not in view:
            raise InvalidParams(f"message {message_id!r} is not in this session's view")
        cut = view.index(message_id)
        kept = view[:cut]
        boundary = Boundary(
            trigger="manual",
            direction="rewind",
            summarizer="none",
            pre_tokens=sum(self.messages[mid].tokens or 0 for mid in view),
            post_tokens=sum(self.messages[mid].tokens or 0 for mid in kept),
            summarized_ids=view[cut:],
            kept_ids=kept,
            view_before=view,
            view_after=kept,
        )
        self._write([{"type": "boundary", "boundary": boundary.wire()}])
        return boundary

    def set_pinned(self, message_id: str, pinned: bool) -> Message:
        self.refuse_if_read_only()
        self.get(message_id)
        self._write([{"type": "pin", "messageId": message_id, "pinned": pinned, "at": now_iso()}])
        return self.messages[message_id]

    def declare_client_context(self, system_tokens: int, tools_tokens: int) -> bool:
        """Record what the client sends besides the messages (raw tokens of its own system
        prompt and tools); False, and nothing written, when it is what was declared."""
        if (system_tokens, tools_tokens) == (
            self.client_context.system_tokens,
            self.client_context.tools_tokens,
        ):
            return False
        figures = {"systemTokens": system_tokens, "toolsTokens": tools_tokens}
        self.set_meta(clientContext=figures)
        return True

    def keep_sent_tools(self, tools: list[dict[str, Any]]) -> bool:
        """Record the tool definitions a send offers the model, so that the session read
        again (a restart, a reopening) counts them as this send does; False, and nothing
        written, when they are the ones recorded."""
        if tools == self.sent_tools:
            return False
        self.set_meta(tools=tools)
        return True

    def keep_auto_pause(self, pause: AutoPause | None) -> None:
        """Record that auto-compact paused on the session, and why, or that it resumed
        (None): a restart keeps a pause until a manual compaction ends it."""
        self.set_meta(autoCompactPaused=pause.wire() if pause is not None else None)

    def set_meta(self, **fields: Any) -> None:
        self._write([{"type": "meta", **fields, "at": now_iso()}])

    # ---- replay --------------------------------------------------------------------------

    def refuse_if_read_only(self) -> None:
        """session_locked for a read-only view, before any other check of a change."""
        if self.damage.header_missing:
            raise SessionLocked(
                f"session {self.session_id}'s transcript has no valid header line; "
                "it is shown read-only and nothing is written to it"
            )
        if self.id_mismatch:
            raise SessionLocked(
                f"session {self.session_id}'s transcript header names another session; "
                "it is shown read-only and nothing is written to it"
            )
        transcript = self.transcript
        if transcript.read_only and transcript.locked:
            raise SessionLocked(
                f"session {self.session_id} is open for writing in another Baton process; "
                "this view is read-only"
            )
        if transcript.read_only:
            raise StorageError(
                f"session {self.session_id} is read-only: {transcript.read_only_reason}",
                path=str(transcript.path),
            )

    def _write(self, events: list[Event]) -> None:
        self.refuse_if_read_only()
        if self.deleted:  # work that began before the delete (a compaction, a reply)
            raise SessionNotFound(f"session {self.session_id} was deleted")
        try:
            self.transcript.append_many(events)
        except TranscriptChanged:
            if self.reload() and self.read_again is not None:
                self.read_again()
            raise
        self._apply_all(events)

    def reload(self) -> bool:
        """Read the session again from its file (another program changed it); a file that
        is gone leaves the session as it was, read-only (False)."""
        old = self.transcript
        old.close()
        try:
            transcript = Transcript.open(old.path)
        except (TranscriptError, StorageError) as exc:
            old.abandon(f"it cannot be read again ({exc.message})")
            return False
        compacting = self.compacting
        Replayed.__init__(self, transcript, self.count, session_id=self.expected_id)
        self.compacting = compacting
        return True

    # ---- helpers -------------------------------------------------------------------------

    def prepared(self, inputs: Sequence[MessageInput | Message]) -> list[Message]:
        """The inputs as the messages `append` would write, counted (append_batch.py): the
        part of an append that reads nothing of the session, so it may run in a worker
        thread first."""
        return prepared_messages(inputs, self.count)
