"""The images and documents among content blocks, a tool result's content looked into too:
one walk (`media_blocks`) for whether a message holds any (`holds_media`), their bytes of
base64 in a request (`request_bytes.py`) and their tokens (`usage/block_tokens.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.core.conversation.messages import Message

MEDIA_TYPES = ("image", "document")
HOLDERS = frozenset({*MEDIA_TYPES, "tool_result"})  # the blocks that may hold media


def media_blocks(blocks: Iterable[object]) -> Iterator[tuple[str, Any]]:
    """The type ("image" or "document") and source of each image and document among
    `blocks` (validated blocks or the API's dicts) and in a tool result's content, in
    order. A source is as stored: a URL image's holds no bytes of base64, yet the image
    counts its tokens."""
    for block in blocks:
        if isinstance(block, dict):  # a tool result's content, a block this version lacks
            kind = block.get("type")
            if kind in MEDIA_TYPES:
                yield kind, block.get("source")
            elif kind == "tool_result" and isinstance(content := block.get("content"), list):
                yield from media_blocks(content)
            continue
        kind = getattr(block, "type", None)
        if kind in MEDIA_TYPES:
            yield kind, getattr(block, "source", None)
        elif kind == "tool_result" and isinstance(content := getattr(block, "content", None), list):
            yield from media_blocks(content)


def holds_media(message: Message) -> bool:
    """Whether the message holds an image or a document (in a tool result's content too):
    their tokens are the API's own figures, which calibration leaves as they are. A
    message of text alone (most) is passed over at a glance."""
    for block in message.content:
        if block.type in HOLDERS:
            return next(media_blocks(message.content), None) is not None
    return False
