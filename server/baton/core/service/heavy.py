"""What a request brings that is too big to weigh on the event loop: a batch's messages
built and counted, a send's prompt, and a draft counted, in a worker thread before the
request goes on.

Counting a 50 MB message held the loop for seconds, and every other session's request
with it. Small inputs are counted where they are (a thread's hop costs more than they do);
the checks against the session, the write and the change stay on the loop. The thread is
a daemon one (`lanes.off_loop`): it writes nothing, so an `exit` while it counts ends the
process at once, the request never carried out.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from baton.core.conversation.messages import (
    ContentBlock,
    Message,
    MessageInput,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
)
from baton.core.conversation.session import Session
from baton.core.service.lanes import off_loop
from baton.core.turn.prompt_input import prompt_input
from baton.core.usage.draft import Draft, DraftTokens, draft_tokens
from baton.core.usage.estimator import Estimator

OFF_LOOP_CHARS = 64 * 1024  # text past this is counted in a worker thread


def text_chars(content: str | Sequence[ContentBlock]) -> int:
    """About how much text `content` holds to count (its text, thinking and results)."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, TextBlock):
            total += len(block.text)
        elif isinstance(block, ThinkingBlock):
            total += len(block.thinking)
        elif isinstance(block, ToolResultBlock):
            result = block.content
            if isinstance(result, str):
                total += len(result)
            elif isinstance(result, list):
                total += sum(len(str(part.get("text", ""))) for part in result)
    return total


async def counted_messages(
    session: Session, inputs: Sequence[MessageInput]
) -> Sequence[MessageInput | Message]:
    """`inputs`, or, when they hold much text, the messages they make, counted in a
    worker thread (`Session.prepared`)."""
    if sum(text_chars(item.content) for item in inputs) < OFF_LOOP_CHARS:
        return inputs
    return await off_loop(partial(session.prepared, inputs))


async def counted_prompt(
    session: Session, content: str | list[ContentBlock] | None
) -> MessageInput | Message | None:
    """The prompt a send's `content` makes (None: no prompt, the send continues), checked as
    a send checks it, and counted in a worker thread when it holds much text."""
    prompt = prompt_input(content)
    if prompt is None:
        return None
    [counted] = await counted_messages(session, [prompt])
    return counted


async def counted_draft(draft: Draft, estimator: Estimator) -> DraftTokens | None:
    """The draft's raw tokens and its media's (`draft_tokens`) counted in a worker thread
    when it holds much text; None (counted where they are used) otherwise."""
    if text_chars(draft.blocks()) < OFF_LOOP_CHARS:
        return None
    return await off_loop(partial(draft_tokens, draft, estimator))
