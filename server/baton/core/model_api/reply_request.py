"""The request payload of a reply: which thinking goes back, and the prefix fingerprint.

Models with preserved thinking check every thinking block sent back against what came
before it when it was generated: `system`, `tools` and every earlier message. Baton
records with each reply the fingerprint of the payload it was generated after
(`Message.prefix_hash`) and sends a turn's thinking back only while the payload before
that turn still has that fingerprint; otherwise the turn goes without its thinking. A
compaction, a microcompact or changed tools all change that prefix. The turn in progress
(the last assistant turn, followed only by the tool results that answer it) always goes
back as it was received: a tool loop with thinking must start with its thinking.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from baton.core.conversation.messages import Message
from baton.core.model_api.api_messages import THINKING_TYPES, ApiTurn, api_block, api_turns
from baton.core.models.thinking import ThinkingSetting, spec_for, thinking_param

__all__ = ["THINKING_TYPES", "Payload", "build_payload", "request_thinking"]


@dataclass
class Payload:
    """What a request sends, and what the rules left out of it."""

    messages: list[dict[str, Any]]
    prefix_hash: str  # fingerprint of system + tools + messages: the next reply's prefix
    omitted: list[str] = field(default_factory=list)  # ids whose thinking stayed out
    stale_in_progress: bool = False  # the turn in progress went back with a changed prefix


def build_payload(
    view: Sequence[Message], system: str | None, tools: list[dict[str, Any]] | None
) -> Payload:
    """The `messages` of a request for `view` under `system` and `tools`, following the
    preserved-thinking rules above."""
    turns = api_turns(view)
    in_progress = _in_progress(turns)
    base = hashlib.blake2b(digest_size=16)  # covers system, tools and out[:-1]
    base.update(_canonical({"system": system or None, "tools": tools or None}))
    out: list[dict[str, Any]] = []
    tail: bytes | None = None  # out[-1] in canonical form, once it is known
    omitted: list[str] = []
    stale = False

    def last() -> bytes:
        nonlocal tail
        if tail is None:
            tail = _canonical(out[-1])
        return tail

    for index, turn in enumerate(turns):
        if turn.role == "user":
            if out and out[-1]["role"] == "user":  # an assistant turn between them vanished
                out[-1]["content"] = _results_first(out[-1]["content"] + turn.content)
                tail = None
                continue
            if out:
                base.update(last())
            out.append({"role": "user", "content": list(turn.content)})
            tail = None
            continue
        prefix = base.copy()
        if out:
            prefix.update(last())
        fingerprint = prefix.hexdigest()
        content = turn.content
        if index == in_progress:
            stale = _has_thinking(content) and turn.sources[0].prefix_hash != fingerprint
        elif _has_thinking(content) and turn.sources[0].prefix_hash != fingerprint:
            content = [b for b in content if b.get("type") not in THINKING_TYPES]
            omitted.extend(m.id for m in turn.sources if _has_thinking_message(m))
        elif len(turn.sources) > 1:  # only the first record's prefix is known
            content = _first_record_thinking_only(turn)
        if not content:
            continue
        if out:
            base.update(last())
        out.append({"role": "assistant", "content": content})
        tail = None
    final = base.copy()
    if out:
        final.update(last())
    return Payload(out, final.hexdigest(), omitted, stale)


def _in_progress(turns: list[ApiTurn]) -> int | None:
    """Index of the turn in progress: the last assistant turn, when all that follows it is
    one user turn of tool results."""
    if len(turns) < 2 or turns[-1].role != "user" or turns[-2].role != "assistant":
        return None
    if all(b.get("type") == "tool_result" for b in turns[-1].content):
        return len(turns) - 2
    return None


def _first_record_thinking_only(turn: ApiTurn) -> list[dict[str, Any]]:
    """A turn merged from several records: thinking of records after the first goes out
    (their own prefix includes the first record's blocks, which Baton did not record)."""
    keep: list[dict[str, Any]] = []
    first = {id(b) for b in turn.content[: _block_count(turn.sources[0])]}
    for block in turn.content:
        if block.get("type") in THINKING_TYPES and id(block) not in first:
            continue
        keep.append(block)
    return keep


def _block_count(message: Message) -> int:
    return sum(1 for b in message.content if api_block(b) is not None)


def _results_first(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(content, key=lambda b: b.get("type") != "tool_result")  # stable


def _has_thinking(content: list[dict[str, Any]]) -> bool:
    return any(b.get("type") in THINKING_TYPES for b in content)


def _has_thinking_message(message: Message) -> bool:
    return any(b.type in THINKING_TYPES for b in message.content)


def _canonical(value: Any) -> bytes:
    # Blocks are rebuilt from the stored ones in one field order, so no key sorting is
    # needed for the same content to give the same bytes.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


BINDING_BETA = "thinking-binding-controls-2026-08-01"


def request_thinking(
    model: str, setting: ThinkingSetting, max_tokens: int, payload: Payload
) -> tuple[dict[str, Any] | None, str | None]:
    """(the request's `thinking` parameter, the beta header it needs, if any).

    When the turn in progress went back after its prefix changed (a compaction while a
    tool loop was open) a model with preserved thinking would refuse the request; the
    documented way through is to ask it to drop the invalid blocks for this request."""
    param = thinking_param(model, setting, max_tokens)
    if not (payload.stale_in_progress and spec_for(model).preserved):
        return param, None
    base = param if param is not None else {"type": "adaptive"}
    binding = {"prefix_mismatch_behavior": "drop_block"}
    return {**base, "block_binding": binding}, BINDING_BETA
