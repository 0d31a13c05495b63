"""What a request brings that is too big to weigh on the event loop: a batch's messages
built and counted, a send's prompt, and a draft counted, in a worker thread before the
request goes on.

Counting a 50 MB message held the loop for seconds, and every other session's request
with it; a PDF's pages are counted from all of its base64. Small inputs are counted where
they are (a thread's hop costs more than they do); the checks against the session, the
write and the change stay on the loop. The thread is a daemon one (`lanes.off_loop`): it
writes nothing, so an `exit` while it counts ends the process at once, the request never
carried out.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from baton.core.conversation.media_blocks import media_blocks
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
# PDFs past this much base64 are read in a worker thread: their pages are counted, and the
# data checked to be a PDF, by decoding all of it (some 3 ms a MB, twice)
OFF_LOOP_PDF = 1024 * 1024


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


def pdf_chars(content: str | Sequence[ContentBlock]) -> int:
    """The base64 of the PDFs `content` holds (a tool result's too), read whole to count
    their pages."""
    if isinstance(content, str):
        return 0
    return sum(
        len(source["data"])
        for kind, source in media_blocks(content)
        if kind == "document"
        and isinstance(source, dict)
        and source.get("type") == "base64"
        and isinstance(source.get("data"), str)
    )


def weighty(contents: Sequence[str | Sequence[ContentBlock]]) -> bool:
    """Whether counting `contents` would hold the event loop: much text, or large PDFs."""
    return (
        sum(text_chars(c) for c in contents) >= OFF_LOOP_CHARS
        or sum(pdf_chars(c) for c in contents) >= OFF_LOOP_PDF
    )


async def counted_messages(
    session: Session, inputs: Sequence[MessageInput]
) -> Sequence[MessageInput | Message]:
    """`inputs`, or, when they hold much text or large PDFs (`weighty`), the messages
    they make, counted in a worker thread (`Session.prepared`)."""
    if not weighty([item.content for item in inputs]):
        return inputs
    return await off_loop(partial(session.prepared, inputs))


async def counted_prompt(
    session: Session, content: str | list[ContentBlock] | None
) -> MessageInput | Message | None:
    """The prompt a send's `content` makes (None: no prompt, the send continues), checked as
    a send checks it, and counted in a worker thread when it holds much text or large
    PDFs."""
    prompt = prompt_input(content)
    if prompt is None:
        return None
    [counted] = await counted_messages(session, [prompt])
    return counted


async def counted_draft(draft: Draft, estimator: Estimator) -> DraftTokens | None:
    """The draft's raw tokens and its media's (`draft_tokens`) counted in a worker thread
    when it holds much text or large PDFs; None (counted where they are used) otherwise."""
    if not weighty([draft.blocks()]):
        return None
    return await off_loop(partial(draft_tokens, draft, estimator))
