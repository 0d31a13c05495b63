"""What a transcript records about usage: the newest real usage, and what a client declared.

`LastUsage` pairs the newest real usage with the estimate of the view it covered, up to
where its response starts (`response_start`); `ClientContext` is what a client said it
sends besides the messages. Replay (replay.py) keeps both as it applies each event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from baton.core.conversation.messages import ApiUsage, Message


@dataclass(frozen=True)
class LastUsage:
    """The newest real usage the session received, and the raw estimate (the stored counts)
    of the view it covered, from the first message up to the first record of its
    response: what the API saw besides that estimate is learned from the pair, and it
    holds after the view has changed (a compaction, an undo) until a newer usage arrives."""

    message_id: str
    usage: ApiUsage
    prefix_tokens: int


@dataclass(frozen=True)
class ClientContext:
    """Raw tokens a client declared it sends besides the messages (its own system prompt
    and tool definitions); the transcript's `meta` events carry it."""

    system_tokens: int = 0
    tools_tokens: int = 0


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
