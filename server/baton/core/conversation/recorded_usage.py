"""What a transcript records about usage: the newest real usage, and what a client declared.

`LastUsage` pairs the newest real usage with the estimate of the view it covered, up to
where its response starts (`response_start`); `LearnedUsage` is that usage before its
estimate is worked out. `ClientContext` is what a client said it sends besides the
messages. Replay (replay.py) keeps both as it applies each event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.core.conversation.messages import ApiUsage, Message
from baton.core.conversation.thinking_sent import thinking_left_out
from baton.core.conversation.turn_framing import reply_framing_unsent

if TYPE_CHECKING:
    from baton.core.conversation.view_state import ViewState


@dataclass(frozen=True)
class LastUsage:
    """The newest real usage the session received, and the raw estimate (the stored counts)
    of the view it covered, from the first message up to the first record of its
    response: what the API saw besides that estimate is learned from the pair, and it
    holds after the view has changed (a compaction, an undo) until a newer usage arrives."""

    message_id: str
    usage: ApiUsage
    prefix_tokens: int
    # the messages of that view whose thinking its request left out (`thinking_sent.py`):
    # their stored counts hold it, the usage does not
    thinking_left_out: tuple[str, ...] = ()
    # the messages of that view holding images or documents: their part of the estimate is
    # in the API's units already, which calibration leaves as it is
    media: tuple[str, ...] = ()
    # the budget note its request carried, which the usage holds and no view does
    note_tokens: int = 0


@dataclass(frozen=True)
class LearnedUsage:
    """A usage as it arrived, with the view it covered: the view's list and its tallies,
    its first `stop` messages (neither changes later: appends go after them, and a view
    that changes wholesale is a new list with new tallies). Its estimate is worked out
    when first asked (`settled`), so a load does not count, for every usage it replays,
    the turns stored without a count that a later compaction summarized (an import's)."""

    message: Message
    view: list[str]
    stop: int
    state: ViewState

    def settled(
        self,
        messages: Mapping[str, Message],
        count: Callable[[Message], int],
        marks: Mapping[str, bytes] | None,
        *,
        own: bool = False,
    ) -> LastUsage:
        """`marks`: each message's mark when it joined the view (the view before it); None
        when no message of the session holds thinking. `own`: the session's `own_requests`."""
        assert self.message.usage is not None
        view, state = self.view, self.state
        prefix = state.tokens(0, self.stop, lambda i: count(messages[view[i]]))
        # the usage's output holds the reply's framing where no turn opens with its record
        prefix += reply_framing_unsent(messages[view[self.stop - 1]])
        media_at = state.media_indices(lambda: [messages[i] for i in view])
        media = tuple(view[i] for i in media_at if i < self.stop)
        note = self.message.note_tokens or 0
        if marks is None:
            return LastUsage(
                self.message.id, self.message.usage, prefix, media=media, note_tokens=note
            )
        left_out = thinking_left_out(  # in the view its request sent
            lambda i: messages[view[i]],
            0,
            self.stop - 1,
            lambda i: marks.get(view[i]) == state.mark(i),
            own=own,
        )
        ids = tuple(view[i] for i in left_out)
        return LastUsage(self.message.id, self.message.usage, prefix, ids, media, note)

    def costs_nothing(self, state: ViewState) -> bool:
        """Whether `state` is the one it covered, with every message of it counted."""
        return state is self.state and min(state.uncounted, default=self.stop) >= self.stop


@dataclass(frozen=True)
class ClientContext:
    """Raw tokens a client declared it sends besides the messages (its own system prompt
    and tool definitions); the transcript's `meta` events carry it."""

    system_tokens: int = 0
    tools_tokens: int = 0

    @classmethod
    def read(cls, raw: object, current: ClientContext) -> ClientContext:
        """A `meta` event's `clientContext` (raw token counts); anything else leaves
        `current` as it is."""
        if not isinstance(raw, dict):
            return current
        figures = [raw.get("systemTokens", 0), raw.get("toolsTokens", 0)]
        if all(isinstance(f, int) and not isinstance(f, bool) and f >= 0 for f in figures):
            return cls(*figures)
        return current


def response_start(messages: Mapping[str, Message], view: list[str], index: int) -> int:
    """The index of the first record of the response whose record is view[index]: the
    records of one response share its API message id, with tool results between them
    (parallel tool calls). An earlier record of it whose usage saw a smaller prompt is
    not the start: view[index]'s usage was taken later, with what lies between in its
    prompt (a file whose records each carry the usage as it grew)."""
    first = index
    record = messages[view[index]]
    api_id = record.api_message_id
    if api_id is None:
        return first
    prompt = _prompt_side(record.usage)
    for j in range(index - 1, -1, -1):
        other = messages[view[j]]
        if other.role == "assistant" and other.api_message_id == api_id:
            if 0 < _prompt_side(other.usage) < prompt:
                break
            first = j
        elif other.role == "assistant" or not other.is_tool_result_only:
            break
    return first


def _prompt_side(usage: ApiUsage | None) -> int:
    """What a real usage says the request's prompt held (0 without one)."""
    if usage is None or not usage.is_real:
        return 0
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
