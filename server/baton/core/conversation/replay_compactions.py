"""What replay does with a compaction's records (a boundary committed, an undo of one) and
with records that do not fit where they stand (skipped, counted, kept aside)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import ValidationError

from baton.core.conversation.boundary import Boundary, view_after_commit
from baton.core.conversation.messages import Attachment
from baton.core.conversation.replayed_view import ReplayedView
from baton.core.conversation.transcript import Event
from baton.core.conversation.undo import undo_compaction
from baton.core.conversation.unrewind import unrewind

if TYPE_CHECKING:
    from baton.core.conversation.undo_check import Checked


class ReplayedCompactions(ReplayedView):
    """Boundaries and undos applied to the replayed view; records that do not fit."""

    load_problems: list[str]
    _bad_records: list[bytes]
    _undone: Checked | None  # the undo `uncompact` checked, as it writes it

    def _unreadable(self, event: Event, what: str, exc: ValidationError) -> None:
        """A record that is JSON but not a valid one: skipped, counted, kept aside."""
        error = exc.errors()[0]  # its message and where, not its input (the whole record)
        where = ".".join(str(part) for part in error["loc"]) or what
        self.load_problems.append(f"skipped an unreadable {what} record: {error['msg']} ({where})")
        self.damage.lines += 1
        self._bad_records.append(json.dumps(event, ensure_ascii=False).encode("utf-8", "replace"))

    def _skipped(self, event: Event, problem: str) -> None:
        """A record that does not fit where it stands in the file (lines written twice or
        swapped by hand): skipped, counted, kept aside, like an unreadable one."""
        self.load_problems.append(f"skipped {problem}")
        self.damage.lines += 1
        self._bad_records.append(json.dumps(event, ensure_ascii=False).encode("utf-8", "replace"))

    def _apply_boundary(self, event: Event) -> None:
        try:
            boundary = Boundary.model_validate(event.get("boundary"))
        except ValidationError as exc:
            self._unreadable(event, "boundary", exc)
            return
        if boundary.id in self.boundaries:
            self._skipped(event, f"a repeated boundary record ({boundary.id})")
            return
        self._repair()
        self._known_at[boundary.id] = len(self.messages)
        for message in boundary.new_messages:
            if message.kind != "message":  # a summary or attachment names its compaction
                message.boundary_id = boundary.id
            if message.kind == "attachment" and message.attachment is None:
                # written before attachments named their file: read it from the first line
                message.attachment = Attachment.from_heading(message.text())
            self.messages[message.id] = message
        self.boundaries[boundary.id] = boundary
        self.active.append(boundary.id)
        self._set_boundary_view(view_after_commit(boundary, self.view, late_at_end=self._repairing))

    def _apply_uncompact(self, event: Event, boundary_id: str) -> None:
        boundary = self.boundaries.get(boundary_id)
        if boundary is None or boundary_id not in self.active:
            # (its boundary comes later, was lost, or was undone already): the view is not
            # the one the file's writer had, so the session is damaged, and says so
            why = "not in force" if boundary is not None else "unknown"
            self._skipped(event, f"an undo of {why} compaction {boundary_id}")
            return
        self._repair()
        self.active.remove(boundary_id)
        if boundary.direction == "microcompact":
            self.microcompact_undone = True
        known = self._undone  # checked by `uncompact` just now: this undo of this view?
        done = known if known and known.target == boundary_id and known.view is self.view else None
        after = done.after if done else None
        if boundary.direction == "rewind":
            if after is None:
                since, stands_for = self.sent_since(boundary_id), self.active_stands_for()
                after = unrewind(self.view, boundary, stands_for, since, self.messages)
        else:
            others, every = [self.boundaries[b] for b in self.active], self.boundaries.values()
            order = done.order if done and done.order is not None else self.arrival()
            placed = done.placed if done else None  # the check's, as `after` is
            after = undo_compaction(self.view, boundary, others, order, every, after, placed)
        self._set_view(after, done.state if done else None)
