"""Messages API shapes: the request payload built from a view (a reply built from a stream is
`reply_stream`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from baton.core.conversation.messages import ContentBlock, Message

# Only these fields of each block type go to the API; anything else (imported extras,
# Baton's own bookkeeping) would be rejected as an unknown field.
API_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("type", "text", "citations", "cache_control"),
    "image": ("type", "source", "cache_control"),
    "document": ("type", "source", "title", "context", "citations", "cache_control"),
    "tool_use": ("type", "id", "name", "input", "cache_control"),
    "tool_result": ("type", "tool_use_id", "content", "is_error", "cache_control"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


# ---- the request payload ------------------------------------------------------------------


def api_block(block: ContentBlock) -> dict[str, Any] | None:
    """A block as the API expects it, or None for blocks the API would reject."""
    raw = block.model_dump(mode="json", exclude_none=True)
    kind = str(raw.get("type"))
    if kind == "compaction":
        return compaction_api_block(raw)
    fields = API_FIELDS.get(kind)
    if fields is None:
        return None
    out = {k: raw[k] for k in fields if k in raw}
    if kind == "text" and not str(out.get("text", "")).strip():
        return None  # the API refuses empty text blocks
    if kind == "thinking" and not out.get("signature"):
        return None  # an unsigned thinking block cannot be sent back
    if kind == "tool_use" and out.get("input") is None:
        out["input"] = {}
    if kind == "tool_result" and isinstance(out.get("content"), list):
        parts = [_result_part(part) for part in out["content"] if not _blank_text(part)]
        if parts:
            out["content"] = parts
        else:  # a result of blank texts only goes with no content, which the API takes
            del out["content"]
    return out


def _blank_text(part: Any) -> bool:
    """Whether a tool result's part is a text of blanks, which the API refuses there too."""
    if not isinstance(part, dict) or part.get("type") != "text":
        return False
    text = part.get("text")  # isspace stops at the first other character: no copy of it
    return isinstance(text, str) and (not text or text.isspace())


# What a tool result's content may hold. Anything else an imported result carries (Claude
# Code's `tool_reference` to a deferred tool this request does not define, which the API
# refuses) goes as text saying what it was.
RESULT_PARTS = frozenset({"text", "image", "document", "search_result"})


def _result_part(part: Any) -> Any:
    if not isinstance(part, dict) or part.get("type") in RESULT_PARTS:
        return part
    name = part.get("tool_name") or part.get("name")
    about = f" {name}" if isinstance(name, str) and name else ""
    return {"type": "text", "text": f"[{part.get('type') or 'block'}{about}]"}


def compaction_api_block(raw: dict[str, Any]) -> dict[str, Any] | None:
    """A compaction block goes back exactly as the API returned it: every field it came
    with (signature, encrypted_content, tool_changes, ...), nothing added. One without a
    summary stands for a compaction that failed; Baton never stores those as summaries."""
    return raw if raw.get("content") else None


THINKING_TYPES = ("thinking", "redacted_thinking")


@dataclass
class ApiTurn:
    """One turn of the `messages` array, and the messages of the view it was built from."""

    role: str
    content: list[dict[str, Any]]
    sources: list[Message]
    api_id: str | None = None


def api_turns(view: Sequence[Message], *, keep_thinking: bool = True) -> list[ApiTurn]:
    """The turns of the Messages API `messages` for Baton's view of a conversation.

    Records of one streamed response (same API message id, tool results between them)
    become one assistant turn, with those tool results moved into the user turn after
    it; consecutive turns of one role are merged; in a user turn tool results come first.
    Without `keep_thinking` no thinking goes back. Thinking that ends an assistant turn
    stays out (the API refuses a message whose last block is thinking: a reply whose output
    ran out while it thought, or whose only text was blanks), and a turn left with nothing
    goes.
    """
    turns: list[ApiTurn] = []
    for message in view:
        blocks = [b for b in (api_block(x) for x in message.content) if b is not None]
        if not keep_thinking:
            blocks = [b for b in blocks if b["type"] not in THINKING_TYPES]
        if not blocks:
            continue
        api_id = message.api_message_id if message.role == "assistant" else None
        target = _open_response(turns, api_id)
        if target is not None:
            turns[target].content.extend(blocks)
            turns[target].sources.append(message)
            continue
        turns.append(ApiTurn(message.role, blocks, [message], api_id))
    merged: list[ApiTurn] = []
    for turn in turns:
        if turn.role == "assistant":
            while turn.content and turn.content[-1]["type"] in THINKING_TYPES:
                turn.content.pop()
            if not turn.content:
                continue
        if merged and merged[-1].role == turn.role:
            merged[-1].content.extend(turn.content)
            merged[-1].sources.extend(turn.sources)
        else:
            merged.append(turn)
    for turn in merged:
        if turn.role == "user":
            turn.content.sort(key=lambda b: b.get("type") != "tool_result")  # stable
    return merged


def to_api_messages(view: Sequence[Message], *, keep_thinking: bool = True) -> list[dict[str, Any]]:
    """The Messages API `messages` for `view` (`api_turns`). Without `keep_thinking` no
    thinking goes back (a summary request: its system prompt is not the one the thinking
    was generated under). A reply's payload, with the preserved-thinking rules, is
    `payload.build_payload`."""
    return [
        {"role": turn.role, "content": turn.content}
        for turn in api_turns(view, keep_thinking=keep_thinking)
    ]


def _open_response(turns: list[ApiTurn], api_id: str | None) -> int | None:
    """Index of the assistant turn of the same response that is still open, if any: the
    last assistant turn, followed by nothing but tool results."""
    if api_id is None:
        return None
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if turn.role == "assistant":
            return index if turn.api_id == api_id else None
        if any(b.get("type") != "tool_result" for b in turn.content):
            return None
    return None


# ---- the reply, event by event ----------------------------------------------------------
