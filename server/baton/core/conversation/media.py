"""What an image's bytes are: the type their signature says, which the API checks.

The API refuses an image whose bytes are not the type given ("Image does not match the
provided media type"), in the turn that sends it and in every later one, so a session that
stored such a message cannot go on until a compaction; a client may call any screenshot
a PNG. An image is therefore stored as the type its bytes are, and data that is no image
the API takes, or more of it than the API takes, is refused before anything is written.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

from baton.core.conversation.messages import ContentBlock, ImageBlock, ToolResultBlock

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
# the API's limit per image, on its base64 data as sent ("image exceeds 5 MB maximum"); the
# bytes it decodes to are fewer, so a check of those would pass images the API refuses
MAX_IMAGE_BASE64 = 5 * 1024 * 1024


def too_large(data: str) -> str | None:
    """Why the API refuses an image of this base64 data for its size; None when it fits."""
    if len(data) <= MAX_IMAGE_BASE64:
        return None
    return (
        f"its data is {len(data):,} bytes of base64, over the API's limit of "
        f"{MAX_IMAGE_BASE64:,} (5 MB) per image"
    )


def image_type(data: bytes) -> str | None:
    """The image type the bytes are (their signature), when the API takes it."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def typed_images(blocks: Sequence[ContentBlock]) -> tuple[list[ContentBlock], list[str]]:
    """`blocks` with each base64 image typed as its bytes are, and the problems of those
    whose data is not base64, no PNG, JPEG, GIF or WebP image, or over the API's limit
    (a tool result's images too)."""
    out: list[ContentBlock] = []
    problems: list[str] = []
    for n, block in enumerate(blocks):
        if isinstance(block, ToolResultBlock):
            problems += [f"block {n} (tool_result) {p}" for p in _result_problems(block)]
        source = block.source if isinstance(block, ImageBlock) else None
        if source is None or source.get("type") != "base64":
            out.append(block)
            continue
        data = source.get("data")
        large = too_large(data) if isinstance(data, str) else None
        if large is not None:
            problems.append(f"block {n} (image): {large}")
            out.append(block)
            continue
        try:
            decoded = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
        except (binascii.Error, ValueError):
            decoded = b""
        found = image_type(decoded)
        if found is None:
            problems.append(f"block {n} (image): its data is no base64 PNG, JPEG, GIF or WebP")
            out.append(block)
        elif found != source.get("media_type"):
            out.append(block.model_copy(update={"source": {**source, "media_type": found}}))
        else:
            out.append(block)
    return out, problems


def _result_problems(block: ToolResultBlock) -> list[str]:
    """The images of a tool result over the API's limit: sent with the result, in every
    later request, as a prompt's are."""
    parts = block.content if isinstance(block.content, list) else []
    problems = []
    for k, part in enumerate(parts):
        source = part.get("source") if part.get("type") == "image" else None
        data = source.get("data") if isinstance(source, dict) else None
        large = too_large(data) if isinstance(data, str) else None
        if large is not None:
            problems.append(f"part {k} (image): {large}")
    return problems
