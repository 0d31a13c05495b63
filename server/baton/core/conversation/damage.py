"""A damaged transcript: what its session lost, and its view repaired to the API rules.

A line that cannot be read (garbage, invalid UTF-8, two lines run together, a record
that fails validation) or a line that is simply gone (noticed when a boundary or an
undo names its message) loses the record it held. The session loads without it; ids
that point at a lost message drop out of the view; and
what the loss broke in the API rules is repaired in memory, never on disk: a tool
result whose call is lost, or a call whose result is lost, shows as text, and a view
that starts with the assistant gets an opening that says its start was lost. The same
file always gives the same repairs, so later boundaries and undos replay alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from baton.core.conversation.invariants import leads_with_compaction
from baton.core.conversation.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)

LOST_START_ID = "baton_lost_start"
LOST_START = "[the start of this conversation was lost: a line of its transcript is unreadable]"


@dataclass
class Damage:
    """What loading found wrong, for the client (`Session.damaged` on the wire)."""

    lines: int = 0  # unreadable lines and records skipped
    header_missing: bool = False
    lost_messages: list[str] = field(default_factory=list)  # ids the view or a boundary named
    repaired_messages: list[str] = field(default_factory=list)  # shown changed to fit the rules
    # what else makes the file unusable as it is: a header naming another session, a
    # name in the sessions folder that is not a regular file (one sentence each)
    notes: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(
            self.lines
            or self.header_missing
            or self.lost_messages
            or self.repaired_messages
            or self.notes
        )

    def lose(self, message_id: str) -> None:
        if message_id not in self.lost_messages:
            self.lost_messages.append(message_id)

    def repaired(self, message_id: str) -> None:
        if message_id not in self.repaired_messages:
            self.repaired_messages.append(message_id)

    def describe(self) -> list[str]:
        """One sentence per kind of damage, for a diagnostic and the log."""
        out: list[str] = list(self.notes)
        if self.header_missing:
            out.append("the transcript has no valid header line; it is shown read-only")
        if self.lines:
            out.append(f"{self.lines} unreadable line(s) skipped and kept aside")
        if self.lost_messages:
            out.append(f"{len(self.lost_messages)} message(s) lost from the conversation")
        if self.repaired_messages:
            out.append(
                f"{len(self.repaired_messages)} message(s) shown repaired to fit the API rules"
            )
        return out


Count = Callable[[Message], int]


def repair_view(view: Sequence[Message], count: Count) -> list[Message]:
    """The view with what breaks the API rules repaired (same ids; see the module text).

    Mirrors `invariant_violations`: a message is copied and changed only where that
    check would complain, so a healthy view comes back as it was.
    """
    out: list[Message] = []
    if view and view[0].role != "user" and not leads_with_compaction(view[0]):
        out.append(text_message("user", LOST_START, id=LOST_START_ID, tokens=0))
    pending: dict[str, int] = {}  # open tool_use id -> index in `out` of its message
    use_ids: set[str] = set()
    seen_api_ids: set[str] = set()
    last_api_id: str | None = None
    for message in view:
        if message.role == "assistant":
            api_id = message.api_message_id
            if api_id is not None and api_id != last_api_id and api_id in seen_api_ids:
                message = message.model_copy(update={"api_message_id": None, "usage": None})
                api_id = None
            if pending and (api_id is None or api_id != last_api_id):
                _close(out, pending)
            if api_id is not None:
                seen_api_ids.add(api_id)
            last_api_id = api_id
            blocks: list[ContentBlock] = []
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    if block.id in use_ids:
                        blocks.append(_call_as_text(block, "repeats an earlier call's id"))
                        continue
                    use_ids.add(block.id)
                    pending[block.id] = len(out)
                blocks.append(block)
            out.append(_changed(message, blocks))
            continue
        blocks = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and pending.pop(block.tool_use_id, None) is None:
                blocks.append(_result_as_text(block))
            else:
                blocks.append(block)
        changed = _changed(message, blocks)
        if not changed.is_tool_result_only:
            _close(out, pending)
            last_api_id = None
        out.append(changed)
    originals = {id(m) for m in view}
    for message in out:
        if id(message) not in originals:
            message.tokens = count(message)
    return out


def _changed(message: Message, blocks: list[ContentBlock]) -> Message:
    if all(a is b for a, b in zip(blocks, message.content, strict=True)):
        return message
    return message.model_copy(update={"content": blocks})


def _close(out: list[Message], pending: dict[str, int]) -> None:
    """Calls whose results never came (they were lost) become text in their message."""
    for use_id, index in pending.items():
        message = out[index]
        blocks: list[ContentBlock] = [
            _call_as_text(b, "its result was lost")
            if isinstance(b, ToolUseBlock) and b.id == use_id
            else b
            for b in message.content
        ]
        out[index] = message.model_copy(update={"content": blocks})
    pending.clear()


def _call_as_text(use: ToolUseBlock, why: str) -> TextBlock:
    call = json.dumps(use.input, ensure_ascii=False)
    return TextBlock(text=f"[tool call {use.id} {use.name} ({why})]: {call}")


def _result_as_text(result: ToolResultBlock) -> TextBlock:
    head = f"[tool result for {result.tool_use_id}, whose call was lost"
    head += ", an error]" if result.is_error else "]"
    content = result.content
    if isinstance(content, str):
        body = content
    else:
        body = "\n".join(
            item["text"]
            if item.get("type") == "text" and isinstance(item.get("text"), str)
            else json.dumps(item, ensure_ascii=False)
            for item in content or []
        )
    return TextBlock(text=f"{head}: {body}" if body else head)


def mismatch_note(header_id: str, file_id: str) -> str:
    return (
        f"its header names session {header_id!r}, not {file_id!r} as its file name does "
        "(a renamed or copied file); it is shown read-only"
    )
