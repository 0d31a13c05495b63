"""What an append writes: each input checked and made a message, unanswered tool calls
answered as interrupted, and the batch checked against the API's rules.

None of it writes: `Session.append` takes the batch from here and writes it in one go, so
a batch that fails a check leaves the transcript as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field

from baton.core.conversation.invariants import ApiRules, block_problems
from baton.core.conversation.media import typed_images
from baton.core.conversation.messages import (
    ContentBlock,
    Message,
    MessageInput,
    ToolResultBlock,
    ToolUseBlock,
    new_id,
)
from baton.core.conversation.records import check_writable
from baton.core.errors import InvalidParams

INTERRUPTED = "interrupted"


@dataclass
class AppendResult:
    message_ids: list[str]
    repairs: list[str] = field(default_factory=list)


def checked_batch(
    inputs: Sequence[MessageInput | Message],
    rules: ApiRules,
    existing: Container[str],
    count: Callable[[Message], int],
) -> tuple[list[Message], AppendResult]:
    """The messages to write for `inputs`, every one counted, with a repair before each
    prompt that leaves tool calls unanswered; InvalidParams for the first input that fails
    a check or when the batch breaks a rule the view did not already break.

    `rules`: a fork of the view's API rules (the batch is added to it); `existing`: the ids
    the session already holds."""
    known: set[str] = set()  # this batch's ids (the session's are in `existing`)
    batch: list[Message] = []
    own_ids: list[str] = []
    repairs: list[str] = []
    for n, item in enumerate(inputs):
        check_writable(item.model_dump(), f"message {n}")
        message = to_message(item)
        if message.id in known or message.id in existing:
            raise InvalidParams(f"message id {message.id!r} already exists in this session")
        known.add(message.id)
        if message.role == "user" and not message.is_tool_result_only:
            answered = {r.tool_use_id for r in message.tool_results()}
            missing = [u for u in rules.unanswered() if u.id not in answered]
            if missing:
                repair = Message(
                    role="user",
                    content=[
                        ToolResultBlock(tool_use_id=u.id, content=INTERRUPTED, is_error=True)
                        for u in missing
                    ],
                )
                repairs.append(
                    "answered unanswered tool call(s) "
                    + ", ".join(u.id for u in missing)
                    + f" with '{INTERRUPTED}' before message {message.id}"
                )
                repair.tokens = count(repair)
                batch.append(repair)
                rules.add(repair)
        batch.append(message)
        own_ids.append(message.id)
        rules.add(message)
    # what the view already broke is not this batch's fault (a damaged or imported view)
    new_problems = [p for p in rules.problems if p not in rules.known_before]
    if new_problems:
        raise InvalidParams("invalid messages: " + "; ".join(new_problems[:5]))
    for message in batch:
        if not message.tokens:
            message.tokens = count(message)
    return batch, AppendResult(own_ids, repairs)


def prepared_messages(
    inputs: Sequence[MessageInput | Message], count: Callable[[Message], int]
) -> list[Message]:
    """The inputs as the messages an append would write, counted: the part of an append
    that reads nothing of the session, so it may run in a worker thread first (each
    input checked as `checked_batch` checks it; InvalidParams for the first that fails)."""
    out: list[Message] = []
    for n, item in enumerate(inputs):
        check_writable(item.model_dump(), f"message {n}")
        message = to_message(item)
        if not message.tokens:
            message.tokens = count(message)
        out.append(message)
    return out


def to_message(item: MessageInput | Message) -> Message:
    """A message as given, or one made from an input whose blocks pass their checks."""
    if isinstance(item, Message):
        return item
    blocks, problems = typed_images(item.blocks())
    problems = block_problems(item.role, blocks) + one_line_problems(item.id, blocks) + problems
    if problems:
        raise InvalidParams(f"invalid {item.role} message: " + "; ".join(problems[:5]))
    return Message(
        id=item.id or new_id(),
        role=item.role,
        content=blocks,
        api_message_id=item.api_message_id,
        usage=item.usage,
    )


def one_line_problems(message_id: str | None, blocks: Sequence[ContentBlock]) -> list[str]:
    """The ids and names given that hold a line break or another control character: the
    session document shows each on one line, and no id or name needs one."""
    named = [("its id", message_id or "")]
    for n, block in enumerate(blocks):
        if isinstance(block, ToolUseBlock):
            named += [(f"block {n} (tool_use) id", block.id), (f"block {n} name", block.name)]
        elif isinstance(block, ToolResultBlock):
            named.append((f"block {n} (tool_result) tool_use_id", block.tool_use_id))
    return [
        f"{what} holds a line break or another control character"
        for what, text in named
        if any(ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029" for c in text)
    ]
