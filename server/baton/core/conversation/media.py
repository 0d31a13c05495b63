"""Images and documents as the API takes them: an image typed as its bytes are (the type
its header says: `image_header.py`) and within the API's limits; a document's bytes a PDF of
a size a request can hold.

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

from baton.core.conversation.image_header import image_size, image_type
from baton.core.conversation.messages import (
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
)

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


PDF = "application/pdf"


def is_pdf(data: bytes) -> bool:
    """Whether the bytes are a PDF: its header may start anywhere in the first 1,024."""
    return b"%PDF-" in data[:1024]


# the API's limit on an image's width and height ("image dimensions exceed max allowed size")
MAX_IMAGE_SIDE = 8000


def too_wide(data: bytes) -> str | None:
    """Why the API refuses an image of these bytes for its width or height (a full-page
    screenshot of a long page is one); None when it fits, or its size cannot be read."""
    size = image_size(data)
    if size is None or max(size) <= MAX_IMAGE_SIDE:
        return None
    return (
        f"it is {size[0]:,} x {size[1]:,} pixels, over the API's limit of "
        f"{MAX_IMAGE_SIDE:,} on either side"
    )


def typed_images(blocks: Sequence[ContentBlock]) -> tuple[list[ContentBlock], list[str]]:
    """`blocks` with each base64 image typed as its bytes are, and the problems of those
    whose data is not base64, no PNG, JPEG, GIF or WebP image, or over the API's limit;
    each base64 document likewise (a PDF, typed application/pdf, within a request's limit);
    a tool result's images and documents too (they go with it in every later request)."""
    out: list[ContentBlock] = []
    problems: list[str] = []
    for n, block in enumerate(blocks):
        if isinstance(block, ImageBlock | DocumentBlock):
            source, problem = _typed(block.type, block.source)
            if problem is not None:
                problems.append(f"block {n} ({block.type}): {problem}")
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
    or is no base64 source), or the problem the API would refuse it for (no image it takes,
    over its 5 MB, or over 8,000 pixels on a side)."""
    if source.get("type") != "base64":
        return source, None
    data = source.get("data")
    large = too_large(data) if isinstance(data, str) else None
    if large is not None:
        return source, large
    decoded = _base64_bytes(data)
    found = image_type(decoded)
    if found is None:
        return source, "its data is no base64 PNG, JPEG, GIF or WebP"
    wide = too_wide(decoded)
    if wide is not None:
        return source, wide
    if found != source.get("media_type"):
        return {**source, "media_type": found}, None
    return source, None


def typed_document(source: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A base64 document's source typed application/pdf when its bytes are a PDF (the same
    object when it already is, or is no base64 source), or the problem the API would refuse
    it for: base64 data is taken only as a PDF, and one over a request's limit fits none."""
    if source.get("type") != "base64":
        return source, None
    data = source.get("data")
    large = pdf_too_large(data) if isinstance(data, str) else None
    if large is not None:
        return source, large
    decoded = _base64_bytes(data)
    if not is_pdf(decoded):
        return source, "its data is no base64 PDF"
    if source.get("media_type") != PDF:
        return {**source, "media_type": PDF}, None
    return source, None


def _base64_bytes(data: Any) -> bytes:
    """The bytes of base64 text; none for anything else or text that is no base64."""
    try:
        return base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except (binascii.Error, ValueError):
        return b""


def _typed(kind: str, source: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """An image's or a document's source as the API takes it, or why it refuses it."""
    return typed_document(source) if kind == "document" else typed_source(source)


def _typed_parts(parts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """A tool result's content with its images and documents typed (the same list when
    none changed), and the problems of those the API would refuse."""
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for k, part in enumerate(parts):
        kind = part.get("type")
        source = part.get("source") if kind in ("image", "document") else None
        if isinstance(source, dict):
            typed, problem = _typed(str(kind), source)
            if problem is not None:
                problems.append(f"part {k} ({kind}): {problem}")
            elif typed is not source:
                part = {**part, "source": typed}
        out.append(part)
    changed = any(a is not b for a, b in zip(out, parts, strict=True))
    return (out if changed else parts), problems


def images_as_taken(blocks: list[ContentBlock]) -> tuple[list[ContentBlock], list[str]]:
    """`blocks` as the API takes their images (an imported message's, which cannot be
    refused): each base64 image typed as its bytes are, one the API takes no such of (no
    PNG, JPEG, GIF or WebP, over its limit) a text saying why; each base64 document
    likewise (a PDF typed application/pdf; no PDF, or over a request's limit: a text); a
    tool result's images and documents too. With what was changed, a line each (none:
    `blocks` itself). Most messages hold no image, document or tool result of parts: they
    are told by their blocks' types alone (an import asks it of every message it makes)."""
    for block in blocks:
        if type(block) in _HOLDING or (
            type(block) is ToolResultBlock and type(block.content) is not str
        ):
            break
    else:
        return blocks, []
    out: list[ContentBlock] = []
    changes: list[str] = []
    for n, block in enumerate(blocks):
        if isinstance(block, ImageBlock | DocumentBlock):
            source, change = _as_taken(block.type, block.source, f"block {n} ({block.type})")
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
                kind = part.get("type")
                held = part.get("source") if kind in ("image", "document") else None
                if isinstance(held, dict):
                    where = f"block {n} (tool_result) part {k} ({kind})"
                    taken, change = _as_taken(str(kind), held, where)
                    if change is not None:
                        changes.append(change)
                        part = taken if taken.get("type") == "text" else {**part, "source": taken}
                parts.append(part)
            if len(changes) > before:
                block = block.model_copy(update={"content": parts})
        out.append(block)
    return (out, changes) if changes else (blocks, changes)


_HOLDING = (ImageBlock, DocumentBlock)  # blocks that are an image or a document themselves


def _as_taken(kind: str, source: dict[str, Any], where: str) -> tuple[dict[str, Any], str | None]:
    """An image's or a document's source as the API takes it, or the text block standing
    for one it takes no such of; with what was changed (None: nothing)."""
    typed, problem = _typed(kind, source)
    if problem is not None:
        return {"type": "text", "text": f"[{kind} left out: {problem}]"}, (
            f"{where}: {problem}; imported as a text saying so"
        )
    if typed is source:
        return source, None
    given = source.get("media_type")
    name = NAMES.get(typed["media_type"], "PDF")
    return typed, f"{where} is a {name} typed {given}: imported as {typed['media_type']}"
