"""Raw tokens of whole messages, each cached by its id and its content's identity and shape:
all of it, its thinking, its images and documents. The estimator (`estimator.py`) counts
the blocks' texts and JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from baton.core.conversation.media_blocks import holds_media
from baton.core.conversation.messages import Message
from baton.core.conversation.thinking_sent import THINKING_TYPES
from baton.core.conversation.turn_framing import MESSAGE_OVERHEAD
from baton.core.usage.block_tokens import BlockTokens

# message id -> (the content list it was counted from, that content's shape, the count);
# the list is held so its identity cannot be recycled while the entry lives
Counts = dict[str, tuple[object, tuple[int, ...], int]]


class MessageTokens(BlockTokens):
    """Each message's counts, kept until its content changes or `forget` drops them."""

    def __init__(self) -> None:
        self._cache: Counts = {}  # raw tokens of each message, all of it
        self._thinking: Counts = {}  # raw tokens of its thinking
        self._media: Counts = {}  # tokens of its images and documents

    def count_message(self, message: Message) -> int:
        """Raw (uncalibrated) tokens of one message, cached by id and content identity."""
        return _cached(self._cache, message, self._count_whole)

    def _count_whole(self, content: list[Any]) -> int:
        return MESSAGE_OVERHEAD + self.count_blocks(content)

    def count_thinking(self, message: Message) -> int:
        """Raw tokens of the message's thinking blocks (as `count_message` counts them),
        cached by id and content identity as `count_message` caches (two sessions may hold
        a message of one id): what a request that leaves them out does not send."""
        return _cached(self._thinking, message, self._count_thinking)

    def _count_thinking(self, content: list[Any]) -> int:
        return self.count_blocks([b for b in content if b.type in THINKING_TYPES])

    def thinking_of(self, messages: Mapping[str, Message], ids: Iterable[str]) -> int:
        """Raw tokens of the thinking of the messages `ids` names (those still held)."""
        return sum(self.count_thinking(messages[i]) for i in ids if i in messages)

    def count_message_media(self, message: Message) -> int:
        """The part of `count_message(message)` its images and documents make, in the
        API's own units (`BlockTokens.count_media`), cached as `count_thinking` caches."""
        return _cached(self._media, message, self.count_media)

    def media_of(self, messages: Mapping[str, Message], ids: Iterable[str]) -> int:
        """Tokens of the images and documents of the messages `ids` names (those held)."""
        return self.media_in(messages[i] for i in ids if i in messages)

    def media_in(self, messages: Iterable[Message]) -> int:
        """Tokens of the images and documents of `messages`, in the API's own units (a
        message holding none passed over at a glance: `holds_media`)."""
        return sum(self.count_message_media(m) for m in messages if holds_media(m))

    def forget(self, message_ids: Iterable[str]) -> None:
        """Drop the cached counts of these messages (their session went away)."""
        for message_id in message_ids:
            self._cache.pop(message_id, None)
            self._thinking.pop(message_id, None)
            self._media.pop(message_id, None)


def _cached(counts: Counts, message: Message, count: Callable[[list[Any]], int]) -> int:
    """`count(message.content)`, kept in `counts` by the message's id until its content is
    another list or changed in place (its shape)."""
    content = message.content
    shape = _shape(content)
    cached = counts.get(message.id)
    if cached is not None and cached[0] is content and cached[1] == shape:
        return cached[2]
    tokens = count(content)
    counts[message.id] = (content, shape, tokens)
    return tokens


# The payload fields whose sizes make a block's shape, per block class (a dict: none).
SHAPE_FIELDS = ("text", "thinking", "data", "content", "input")
_shape_fields: dict[type, tuple[str, ...]] = {}


def _shape(content: list[Any]) -> tuple[int, ...]:
    """Sizes of each block's main payload: changes whenever a block is edited in place."""
    sizes: list[int] = [len(content)]
    for block in content:
        names = _shape_fields.get(type(block))
        if names is None:
            declared = getattr(type(block), "model_fields", {})
            names = _shape_fields[type(block)] = tuple(n for n in SHAPE_FIELDS if n in declared)
        for name in names:
            value = getattr(block, name)
            if isinstance(value, (str, list, dict)):
                sizes.append(len(value))
    return tuple(sizes)
