"""Claude Code's older inline reads: a file it read for the user (a file the prompt named
with @, one it brought back after its own compaction) written into the conversation as a
prompt's text, "Called the Read tool with the following input: {...}" then "Result of
calling the Read tool: ...", not as a tool call. Kept by a compaction, such a read shows
its file as a kept `Read` call does."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from baton.core.conversation.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

CALLED = "Called the Read tool with the following input:"
RESULT = "Result of calling the Read tool:"
_OPEN, _CLOSE = "<system-reminder>", "</system-reminder>"  # the wrapper a request adds
_HEAD = 256  # characters enough to hold the wrapper, blanks and the heading


InlineRead = tuple[Message, ToolUseBlock, ToolResultBlock]


def inline_reads(messages: Sequence[Message]) -> Iterator[InlineRead]:
    """Each inline read of `messages`: the message holding its result, and the `Read` call
    and the result it stands for. A user's text naming the call, then (in the same text,
    or the next one of a user message) its result; a call with no result after it, a
    failed read ("Read tool failed to read ..."), is none."""
    given: dict[str, Any] | None = None
    for message in messages:
        if message.role != "user" or message.kind != "message":
            given = None
            continue
        for block in message.content:
            text = _unwrapped(block.text) if isinstance(block, TextBlock) else ""
            if given is not None and text.startswith(RESULT):
                yield message, *_call(given, text)
            given = None
            if text.startswith(CALLED):
                head, joined, rest = text.partition("\n" + RESULT)
                given = _input(head[len(CALLED) :])
                if given is not None and joined:
                    yield message, *_call(given, RESULT + rest)
                    given = None


def _unwrapped(text: str) -> str:
    """The text of a block that opens as an inline read does, out of its reminder; "" for
    any other, told from its head alone (a huge text is not copied to be looked at)."""
    head = text[:_HEAD].lstrip()
    if head.startswith(_OPEN):
        head = head[len(_OPEN) :].lstrip()
    if not head.startswith((CALLED, RESULT)):
        return ""
    text = text.strip()
    if text.startswith(_OPEN) and text.endswith(_CLOSE):
        return text[len(_OPEN) : -len(_CLOSE)].strip()
    return text


def _input(raw: str) -> dict[str, Any] | None:
    try:
        given = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(given, dict) or not isinstance(given.get("file_path"), str):
        return None
    return given


def _call(given: dict[str, Any], text: str) -> tuple[ToolUseBlock, ToolResultBlock]:
    """The call and its result; the result's text as the read showed it: a JSON string
    (Claude Code 1.0's), else the text after the heading's line end."""
    body = text[len(RESULT) :]
    shown = body.lstrip(" ")
    if shown.startswith('"'):
        try:
            decoded, _ = json.JSONDecoder().raw_decode(shown)
        except ValueError:
            decoded = None
        shown = decoded if isinstance(decoded, str) else shown
    elif shown.startswith("\n"):
        shown = shown[1:]
    use = ToolUseBlock(id="inline-read", name="Read", input=given)
    return use, ToolResultBlock(tool_use_id=use.id, content=shown)
