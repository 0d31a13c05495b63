"""API rounds of a conversation, and dropping the oldest ones when a summary prompt is too long."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from baton.core.conversation.messages import Message, text_message

TRUNCATION_MARKER = "[earlier conversation truncated for compaction retry]"
DROP_SHARE = 0.2  # of the rounds, when the error does not say by how much the prompt is over


def api_rounds(messages: Sequence[Message]) -> list[list[Message]]:
    """Group messages by API round.

    A round starts at an assistant record whose API message id differs from the previous
    assistant record's (records without an id each start one); the tool results and the
    next prompt that follow a response belong to its round. Everything before the first
    assistant record is round 0.
    """
    rounds: list[list[Message]] = [[]]
    previous: str | None = None
    for message in messages:
        if message.role == "assistant":
            api_id = message.api_message_id
            if api_id is None or api_id != previous:
                rounds.append([])
            previous = api_id
        rounds[-1].append(message)
    return [group for group in rounds if group]


def truncate_head(
    messages: Sequence[Message],
    overflow_tokens: int | None,
    count: Callable[[Message], int],
) -> list[Message] | None:
    """The messages without their oldest rounds, or None when no round can be dropped.

    Drops rounds until their tokens cover `overflow_tokens` (by how much the prompt was
    too long), or a fifth of the rounds when that is unknown; always keeps the newest
    round. The API needs a user message first, so a marker prompt is put in front when
    what is left starts with the assistant; a marker left by an earlier retry is not a
    round of its own.
    """
    if messages and messages[0].role == "user" and messages[0].text() == TRUNCATION_MARKER:
        messages = messages[1:]
    rounds = api_rounds(messages)
    if len(rounds) < 2:
        return None
    if overflow_tokens is None:
        drop = max(1, math.floor(len(rounds) * DROP_SHARE))
    else:
        drop = 0
        freed = 0
        while drop < len(rounds) and (freed < overflow_tokens or drop == 0):
            freed += sum(count(m) for m in rounds[drop])
            drop += 1
    drop = min(drop, len(rounds) - 1)
    rest = [m for group in rounds[drop:] for m in group]
    if rest[0].role == "assistant":
        rest.insert(0, text_message("user", TRUNCATION_MARKER))
    return rest
