"""What a session's view holds in tokens: the usage anchor and the running tallies.

The anchor is the newest real usage that still describes the start of the view; the
tallies (view_state.py) give the raw estimate of any stretch of it. The meter, the
budget and calibration read both through `Session`, which inherits them from here.
"""

from __future__ import annotations

from collections.abc import Callable

from baton.core.conversation.messages import ApiUsage
from baton.core.conversation.recorded_usage import response_start
from baton.core.conversation.replay import Replayed
from baton.core.conversation.replayed_view import TokenCounter
from baton.core.conversation.request_bytes import (
    Media,
    message_bytes,
    messages_media,
    request_bytes_of,
)
from baton.core.conversation.thinking_sent import thinking_dropped, thinking_left_out
from baton.core.conversation.view_state import ViewState


class ViewTokens(Replayed):
    """A replayed session's view measured: where its usage anchors, and its raw tokens."""

    def anchor(self) -> tuple[int, ApiUsage] | None:
        """(index of the first record of the anchoring response, its usage), or None.

        The anchor is the last assistant record with real usage whose preceding view is
        unchanged since that usage arrived; the count starts at the first record sharing
        its API message id so that interleaved tool results are counted.
        """
        state = self._state
        if not state.anchor_known:
            state.anchor = self._find_anchor()
            state.anchor_known = True
        return state.anchor

    def media_in_view(self) -> Media:
        """The images and documents the view holds, and their bytes of base64: those of the
        messages holding any (`ViewState.media_indices`), each read once (the ones found
        since the last read added to the sum)."""
        state = self._state
        indices = state.media_indices(self.view_messages)
        if state.media_summed < len(indices):
            messages, view = self.messages, self.view
            found = (messages[view[i]] for i in indices[state.media_summed :])
            state.media, state.media_summed = messages_media(found, state.media), len(indices)
        return state.media

    def request_bytes(self, model: str) -> int:
        """About the bytes of the request the view makes under the session's system prompt
        (`request_bytes_of`), from a running tally of its messages' bytes: each message is
        measured once, when first read after it joined the view."""
        state = self._state
        if state.bytes_seen < len(self.view):
            size = state.messages_bytes
            for message_id in self.view[state.bytes_seen :]:
                size += message_bytes(self.messages[message_id])
            state.messages_bytes, state.bytes_seen = size, len(self.view)
        return request_bytes_of(state.messages_bytes, len(self.view), self.system_prompt, model)

    def tokens_in_view(self, start: int, stop: int, count: TokenCounter | None = None) -> int:
        """Raw tokens of view[start:stop] from the running tallies; a message stored
        without a count is counted by `count` (default: the session's counter)."""
        counter = count or self.count
        return self._state.tokens(start, stop, lambda i: counter(self.messages[self.view[i]]))

    def media_tokens_in_view(self, start: int, stop: int, count: TokenCounter) -> int:
        """The part of view[start:stop]'s raw tokens its images and documents make, each
        message holding any counted by `count` (the estimator's `count_message_media`)."""
        indices = self._state.media_indices(self.view_messages)
        messages, view = self.messages, self.view
        return sum(count(messages[view[i]]) for i in indices if start <= i < stop)

    def tokens_by_kind(self, count: TokenCounter | None = None) -> dict[str, int]:
        """Raw tokens of the view per message kind, from the running tallies."""
        counter = count or self.count
        out = dict(self._state.by_kind)
        for i in self._state.uncounted:
            message = self.messages[self.view[i]]
            out[message.kind] += counter(message)
        return out

    def thinking_left_out(
        self, start: int = 0, stop: int | None = None, *, continued: bool = True
    ) -> list[str]:
        """The messages of view[start:stop] whose thinking a request for view[:stop] (the
        next one, by default) leaves out (`thinking_sent.py`): their stored counts hold it.
        `continued`: that request continues the turn in progress (not a new prompt's)."""
        return self._thinking_ids(thinking_left_out, start, stop, continued)

    def thinking_dropped(
        self, anchor: int, stop: int | None = None, *, continued: bool = True
    ) -> list[str]:
        """The messages of the anchoring reply's turn, up to view[anchor], whose thinking
        that reply's usage holds but a request for view[:stop] leaves out
        (`thinking_sent.thinking_dropped`)."""
        return self._thinking_ids(thinking_dropped, anchor, stop, continued)

    def _thinking_ids(
        self, which: Callable[..., list[int]], index: int, stop: int | None, continued: bool
    ) -> list[str]:
        if not self.holds_thinking:
            return []
        view, messages = self.view, self.messages
        top = len(view) if stop is None else stop
        found = which(
            lambda i: messages[view[i]],
            index,
            top,
            self.unchanged_before,
            continued=continued,
            own=self.own_requests,
        )
        return [view[i] for i in found]

    def unchanged_before(self, index: int) -> bool:
        """Whether the view before view[index] is the one its message joined after."""
        return self._prefix_marks.get(self.view[index]) == self._state.mark(index)

    def anchor_before(self, stop: int) -> tuple[int, ApiUsage] | None:
        """The anchor `anchor()` would find in view[:stop] (for calibration from the growth
        between two usages)."""
        return self._find_anchor(stop)

    def settle_anchor(self, view: list[str], state: ViewState) -> None:
        """Find the anchor of `view` (whose state is `state`, not the session's yet: an
        undo's check made off the event loop) and keep it in `state`."""
        state.anchor = self._find_anchor(view=view, state=state)
        state.anchor_known = True

    def _find_anchor(
        self, stop: int | None = None, view: list[str] | None = None, state: ViewState | None = None
    ) -> tuple[int, ApiUsage] | None:
        view = self.view if view is None else view
        index = self._anchor_record(stop, view, state)
        if index is None:
            return None
        usage = self.messages[view[index]].usage
        assert usage is not None
        return response_start(self.messages, view, index), usage
