"""Token estimates of images and PDFs, read from their base64 data: image headers, PDF pages."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping

from baton.core.conversation.image_header import image_size as header_size
from baton.core.conversation.image_header import image_type

MEDIA_FLAT = 2_000  # an image or document whose size we cannot read
PDF_PER_PAGE = 2_000
IMAGE_LONG_EDGE = 1_568  # the API downsizes images beyond this edge
IMAGE_MAX = 1_600
IMAGE_PIXELS_PER_TOKEN = 750
HEADER_B64_CHARS = 96_000  # enough base64 to reach a JPEG's frame header past EXIF
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def image_tokens(source: object) -> int:
    """w*h/750 after the API's resize when the header gives the size, else a flat figure."""
    if not isinstance(source, Mapping) or source.get("type") != "base64":
        return MEDIA_FLAT
    size = image_size(str(source.get("data") or ""))
    if size is None:
        return MEDIA_FLAT
    width, height = size
    scale = min(1.0, IMAGE_LONG_EDGE / max(width, height))
    pixels = (width * scale) * (height * scale)
    return max(1, min(IMAGE_MAX, math.ceil(pixels / IMAGE_PIXELS_PER_TOKEN)))


def _decode_prefix(data: str, chars: int | None) -> bytes:
    text = data if chars is None else data[: chars - chars % 4]
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(data: str) -> tuple[int, int] | None:
    """(width, height) from a base64 image's header, read as an append reads it
    (`image_header.py`), or None. Its first HEADER_B64_CHARS hold the header of most
    images; a JPEG whose frame header is not in them (more metadata before it: extended
    XMP, a large ICC profile) is read whole, as the append's check of its sides reads it."""
    head = _decode_prefix(data, HEADER_B64_CHARS)
    size = header_size(head)
    if size is None and len(data) > HEADER_B64_CHARS and image_type(head) == "image/jpeg":
        size = header_size(_decode_prefix(data, None))
    return size


def pdf_pages(data: str) -> int:
    """Page objects in a base64 PDF (0 when they hide inside compressed object streams)."""
    return len(_PDF_PAGE.findall(_decode_prefix(data, None)))
