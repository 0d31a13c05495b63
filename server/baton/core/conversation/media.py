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
from typing import Any

from baton.core.conversation.messages import ContentBlock, ImageBlock, TextBlock, ToolResultBlock

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}
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


# the API's limit on a whole request ("request_too_large"): a PDF whose base64 data is more
# than that fits in no request, and once stored every later request of the session holds it
MAX_REQUEST_BYTES = 32 * 1024 * 1024


def pdf_too_large(data: str) -> str | None:
    """Why the API refuses every request holding a PDF of this base64 data; None when one
    may hold it."""
    if len(data) <= MAX_REQUEST_BYTES:
        return None
    return (
        f"its data is {len(data):,} bytes of base64, over the API's limit of "
        f"{MAX_REQUEST_BYTES:,} (32 MB) on a whole request"
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
    whose data is not base64, no PNG, JPEG, GIF or WebP image, or over the API's limit;
    a tool result's images too (they go with it in every later request)."""
    out: list[ContentBlock] = []
    problems: list[str] = []
    for n, block in enumerate(blocks):
        if isinstance(block, ImageBlock):
            source, problem = typed_source(block.source)
            if problem is not None:
                problems.append(f"block {n} (image): {problem}")
            elif source is not block.source:
                block = block.model_copy(update={"source": source})
        elif isinstance(block, ToolResultBlock) and isinstance(block.content, list):
            parts, found = _typed_parts(block.content)
            problems += [f"block {n} (tool_result) {p}" for p in found]
            if parts is not block.content:
                block = block.model_copy(update={"content": parts})
        out.append(block)
    return out, problems


def typed_source(source: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A base64 image's source typed as its bytes are (the same object when it already is,
    or is no base64 source), or the problem the API would refuse it for."""
    if source.get("type") != "base64":
        return source, None
    data = source.get("data")
    large = too_large(data) if isinstance(data, str) else None
    if large is not None:
        return source, large
    try:
        decoded = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except (binascii.Error, ValueError):
        decoded = b""
    found = image_type(decoded)
    if found is None:
        return source, "its data is no base64 PNG, JPEG, GIF or WebP"
    if found != source.get("media_type"):
        return {**source, "media_type": found}, None
    return source, None


def _typed_parts(parts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """A tool result's content with its images typed (the same list when none changed),
    and the problems of those the API would refuse."""
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for k, part in enumerate(parts):
        source = part.get("source") if part.get("type") == "image" else None
        if isinstance(source, dict):
            typed, problem = typed_source(source)
            if problem is not None:
                problems.append(f"part {k} (image): {problem}")
            elif typed is not source:
                part = {**part, "source": typed}
        out.append(part)
    changed = any(a is not b for a, b in zip(out, parts, strict=True))
    return (out if changed else parts), problems


def images_as_taken(blocks: list[ContentBlock]) -> tuple[list[ContentBlock], list[str]]:
    """`blocks` as the API takes their images (an imported message's, which cannot be
    refused): each base64 image typed as its bytes are, one the API takes no such of (no
    PNG, JPEG, GIF or WebP, over its limit) a text saying why; a tool result's images too.
    With what was changed, a line each (none: `blocks` itself)."""
    out: list[ContentBlock] = []
    changes: list[str] = []
    for n, block in enumerate(blocks):
        if isinstance(block, ImageBlock):
            source, change = _as_taken(block.source, f"block {n} (image)")
            if change is not None:
                changes.append(change)
                block = (
                    TextBlock(text=source["text"])
                    if source.get("type") == "text"
                    else block.model_copy(update={"source": source})
                )
        elif isinstance(block, ToolResultBlock) and isinstance(block.content, list):
            parts: list[dict[str, Any]] = []
            before = len(changes)
            for k, part in enumerate(block.content):
                held = part.get("source") if part.get("type") == "image" else None
                if isinstance(held, dict):
                    where = f"block {n} (tool_result) part {k} (image)"
                    taken, change = _as_taken(held, where)
                    if change is not None:
                        changes.append(change)
                        part = taken if taken.get("type") == "text" else {**part, "source": taken}
                parts.append(part)
            if len(changes) > before:
                block = block.model_copy(update={"content": parts})
        out.append(block)
    return (out, changes) if changes else (blocks, changes)


def _as_taken(source: dict[str, Any], where: str) -> tuple[dict[str, Any], str | None]:
    """An image's source as the API takes it, or the text block standing for an image it
    takes no such of; with what was changed (None: nothing)."""
    typed, problem = typed_source(source)
    if problem is not None:
        return {"type": "text", "text": f"[image left out: {problem}]"}, (
            f"{where}: {problem}; imported as a text saying so"
        )
    if typed is source:
        return source, None
    given = source.get("media_type")
    kind = NAMES[typed["media_type"]]
    return typed, f"{where} is a {kind} typed {given}: imported as {typed['media_type']}"
