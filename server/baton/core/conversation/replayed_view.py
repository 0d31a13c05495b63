"""A replayed session's view as it changes wholesale: the usage it learned, a repaired view.

A boundary, an undo or a repair gives the view a new list: its tallies are worked out
again, messages stored without a count are counted as they come back, ids of lost
messages drop out (and are reported), and a damaged session's view is repaired to stay
within the API rules. `Replayed` (replay.py) applies the events on top of it.
"""

from __future__ import annotations

from collections.abc import Callable

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.damage import Damage, repair_view
from baton.core.conversation.messages import Message
from baton.core.conversation.recorded_usage import LastUsage, LearnedUsage, response_start
from baton.core.conversation.undo import rewound_out, stands_for_of
from baton.core.conversation.unrewind import SentSince, sent_since
from baton.core.conversation.view_state import ViewState

TokenCounter = Callable[[Message], int]


class ReplayedView:
    """The view, the boundaries in force and the usage of a session being replayed; the
    replay (`Replayed._replay`) sets every field below."""

    count: TokenCounter
    messages: dict[str, Message]
    view: list[str]
    boundaries: dict[str, Boundary]
    active: list[str]
    damage: Damage
    holds_thinking: bool
    microcompact_undone: bool
    _known_at: dict[str, int]
    _repairing: bool
    _replaying: bool  # the views made wait to be framed (`ViewState`, `Replayed._keep_views`)
    _prefix_marks: dict[str, bytes]
    _learned: LearnedUsage | None
    _learn_at: int | None
    _last_usage: LastUsage | None
    # every request of the session is Baton's own (`baton acp`'s service: its store makes
    # its sessions so): what Baton did not ask for is neither sent nor counted as the client
    # that wrote it sent it (`thinking_sent.thinking_left_out`, `usage/overhead.foreign`)
    own_requests: bool
    _state: ViewState

    def view_messages(self) -> list[Message]:
        return [self.messages[mid] for mid in self.view]

    def _learn(self, index: int) -> None:
        """Keep view[index]'s usage with the view it covered (`LearnedUsage`)."""
        first = response_start(self.messages, self.view, index)
        message = self.messages[self.view[index]]
        self._learned = LearnedUsage(message, self.view, first + 1, self._state)
        self._last_usage = None

    def _learn_pending(self) -> None:
        """Learn the usage record a run of new messages left last (`_apply_all`)."""
        if self._learn_at is not None:
            index, self._learn_at = self._learn_at, None
            self._learn(index)

    def _set_boundary_view(self, view: list[str]) -> None:
        """The view a boundary leaves. One that kept the start of the view (`from`,
        `range`, a rewind) leaves the figure anchored on the kept part's last reply: that
        usage is the one carried from then on (what it showed besides the estimate),
        though a newer one came in the part compacted, so a compaction on top compares,
        and leaves, the figure it compacted (`usage/overhead.carried_tokens`)."""
        before = self.view
        self._set_view(view)
        if not self.view or not before or self.view[0] != before[0]:
            return  # a new start (`all`, `up_to`): no usage anchors it
        found = self._anchor_record()
        if found is not None and self.view[found] != self._learned_id():
            self._learn(found)

    def _learned_id(self) -> str | None:
        """The message of the newest usage learned, settled or not."""
        if self._learned is not None:
            return self._learned.message.id
        return None if self._last_usage is None else self._last_usage.message_id

    def _anchor_record(
        self, stop: int | None = None, view: list[str] | None = None, state: ViewState | None = None
    ) -> int | None:
        """The index in `view` (the session's, by default) of the last record with a real
        usage whose view before it is the one it arrived after (the anchor's record)."""
        view = self.view if view is None else view
        state = self._state if state is None else state
        marks, messages = self._prefix_marks, self.messages
        top = len(view) if stop is None else stop
        for index in range(top - 1, -1, -1):
            message = messages[view[index]]
            if message.anchors_usage and marks.get(message.id) == state.mark(index):
                return index
        return None

    @property
    def last_usage(self) -> LastUsage | None:
        """The newest real usage with the raw estimate of the view it covered."""
        self._learn_pending()
        if self._learned is not None:
            marks = self._prefix_marks if self.holds_thinking else None
            self._last_usage = self._learned.settled(
                self.messages, self.count, marks, own=self.own_requests
            )
            self._learned = None  # the view it covered is let go
        return self._last_usage

    def _lost_behind_boundaries(self) -> None:
        """The messages a compaction (or rewind) in force names as summarized whose lines
        are gone: lost, and told at load, not first when an undo brings them back (one
        look-up per id, once per load)."""
        messages = self.messages
        for boundary_id in self.active:
            for mid in self.boundaries[boundary_id].summarized_ids:
                if mid not in messages:
                    self.damage.lose(mid)

    def arrival(self) -> dict[str, int]:
        """Each message's place in the order the session's messages came."""
        return {mid: n for n, mid in enumerate(self.messages)}

    def rewound_out(self) -> set[str]:
        """The messages the rewinds in force took out of the view."""
        return rewound_out(self.view, (self.boundaries[b] for b in self.active))

    def sent_since(self, boundary_id: str) -> SentSince:
        """Whether a message came into the session after boundary `boundary_id` did."""
        return sent_since(self.messages, self._known_at.get(boundary_id, 0))

    def active_stands_for(self, *, besides: str | None = None) -> dict[str, list[str]]:
        """What each message the active compactions (but `besides`) introduced stands for."""
        return stands_for_of(self.boundaries[b] for b in self.active if b != besides)

    def _set_view(self, view: list[str], state: ViewState | None = None) -> None:
        """The new view; ids of lost messages drop out of it (and are reported), and a
        damaged session's view is repaired to stay within the API rules. `state`: the
        view's, built already (by an undo's check made off the event loop, for a view whose
        messages are all there)."""
        lost = [] if state is not None else [mid for mid in view if mid not in self.messages]
        for mid in lost:
            self.damage.lose(mid)
            self._repairing = True
        self._mark_view([mid for mid in view if mid in self.messages] if lost else view, state)
        self._repair()

    def _repair(self) -> None:
        if not self._repairing:
            return
        repaired = repair_view(self.view_messages(), self.count)
        changed = len(repaired) != len(self.view)
        for message in repaired:
            if self.messages.get(message.id) is not message:
                _ = self.last_usage  # estimated from the messages as they were
                self.messages[message.id] = message
                self.damage.repaired(message.id)
                changed = True
        if changed:
            self._mark_view([m.id for m in repaired])

    def _mark_view(self, view: list[str], state: ViewState | None = None) -> None:
        """A view that changed wholesale: what is kept about it is worked out again (or
        taken as `state` built it, for this very view). A message stored without a token
        count (a turn an imported compaction had summarized, brought back by an undo) is
        counted as it comes into the view."""
        if self._learned is not None and self._learned.costs_nothing(self._state):
            _ = self.last_usage  # worked out now, and the old view let go
        self.view = view
        if state is None:
            state = ViewState(self.with_counts(self.view_messages()), framed=not self._replaying)
        self._state = state

    def with_counts(self, messages: list[Message]) -> list[Message]:
        """`messages`, each with its token count: one stored without a count (a turn an
        imported compaction had summarized) is counted now."""
        for message in messages:
            if not message.tokens:
                message.tokens = self.count(message)
        return messages
