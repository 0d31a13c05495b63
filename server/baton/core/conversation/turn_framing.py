"""Which messages of a view open a turn of the request's `messages`, so that an estimate
counts each turn's framing once, as the request sends it.

A request lays the view out in turns (`model_api/api_messages.api_turns`): messages of one
role side by side are one turn (a summary and the prompt after it, summaries or restored
files side by side, tool results and the prompt that closes their loop), and so are the
records of one response with the tool results between them; a message with nothing the
API takes (blank text, unsigned thinking) and an assistant turn of thinking alone are not
sent. Each stored count holds its message's framing (`MESSAGE_OVERHEAD`): the framing of a
message that opens no turn is not sent, and the estimates take it out (`view_state.py`
for the view's tallies, `joined_framing` for a list).
"""

from __future__ import annotations

from collections.abc import Sequence

from baton.core.conversation.messages import (
    CompactionBlock,
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.thinking_sent import THINKING_TYPES

# Role and turn framing the API adds around every turn; small, and calibration absorbs
# whatever this misses.
MESSAGE_OVERHEAD = 4


class TurnFraming:
    """`api_turns`' layout followed one message at a time."""

    __slots__ = ("response", "response_sent", "role")

    def __init__(self) -> None:
        self.role: str | None = None  # the role of the last turn the request sends
        # the API message id of the last assistant turn, while only tool results follow it
        self.response: str | None = None
        self.response_sent = False  # whether that turn holds more than thinking (is sent)

    def opens(self, message: Message) -> bool:
        """Take in the view's next message; whether it opens a turn the request sends."""
        # loops rather than all() and any() over generators: this runs for every message
        # a load replays
        sent = [b for b in message.content if _sendable(b)]
        if not sent:
            return False  # the request leaves it out
        if message.role == "user":
            for block in sent:
                if not isinstance(block, ToolResultBlock):
                    self.response = None  # a prompt ends the response's turn
                    break
            return self._open("user")
        more = False  # whether it sends more than thinking
        for block in sent:
            if block.type not in THINKING_TYPES:
                more = True
                break
        api_id = message.api_message_id
        if api_id is None or api_id != self.response:
            self.response, self.response_sent = api_id, more
            return more and self._open("assistant")
        if self.response_sent or not more:
            return False  # a later record of a response: its turn's
        self.response_sent = True  # the thinking its turn held so far is sent now
        return self._open("assistant")

    def _open(self, role: str) -> bool:
        opens = self.role != role
        self.role = role
        return opens


def reply_framing_unsent(reply: Message) -> int:
    """Raw tokens of the framing that a reply's usage holds (its output, as the stored count
    of the reply's first record) and a request does not send, `reply` being that record:
    all that record sends is thinking, so no turn opens with it (the reply goes without it,
    or a later record of it opens the turn, with a framing of its own)."""
    sent = [b for b in reply.content if _sendable(b)]
    thinking_only = bool(sent) and all(b.type in THINKING_TYPES for b in sent)
    return MESSAGE_OVERHEAD if reply.role == "assistant" and thinking_only else 0


def joined_framing(messages: Sequence[Message], start: int = 0) -> int:
    """Raw tokens of the framing a request for `messages` does not send, held by the
    stored counts of messages[start:]: MESSAGE_OVERHEAD for each that opens no turn."""
    framing = TurnFraming()
    opens = [framing.opens(message) for message in messages]
    return MESSAGE_OVERHEAD * opens[start:].count(False)


def ends_in_user_turn(messages: Sequence[Message]) -> bool:
    """Whether the last turn a request for `messages` sends is the user's (summaries, pinned
    prompts, tool results): a prompt sent after them joins that turn, its framing not sent.
    Followed from the last prompt on, which ends any response's turn."""
    start = len(messages) - 1
    while start > 0 and not _prompt(messages[start]):
        start -= 1
    framing = TurnFraming()
    for message in messages[max(start, 0) :]:
        framing.opens(message)
    return framing.role == "user"


def _prompt(message: Message) -> bool:
    return message.role == "user" and any(
        _sendable(b) and not isinstance(b, ToolResultBlock) for b in message.content
    )


def _sendable(block: ContentBlock) -> bool:
    """Whether the API takes `block` (`api_messages.api_block` keeps it)."""
    kind = type(block)
    if kind is ToolUseBlock or kind is ToolResultBlock:  # the most common, told at once
        return True
    if isinstance(block, TextBlock):
        return bool(block.text.strip())
    if isinstance(block, ThinkingBlock):
        return bool(block.signature)
    if isinstance(block, CompactionBlock):
        return bool(block.content)
    return True
