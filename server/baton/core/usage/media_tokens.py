"""Token estimates of images and PDFs, read from their base64 data: image headers, PDF pages."""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Mapping

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
    """(width, height) from a base64 PNG, GIF, WebP or JPEG header, or None."""
    head = _decode_prefix(data, HEADER_B64_CHARS)
    size: tuple[int, int] | None = None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and len(head) >= 24:
        size = struct.unpack(">II", head[16:24])
    elif head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        size = struct.unpack("<HH", head[6:10])
    elif head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        size = _webp_size(head)
    elif head[:2] == b"\xff\xd8":
        size = _jpeg_size(head)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(head[24:27], "little") + 1
        return width, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker."""
    pos = 2
    while pos + 9 <= len(head):
        if head[pos] != 0xFF:
            return None
        marker = head[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[pos + 5 : pos + 9])
            return width, height
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2  # markers without a length field
            continue
        pos += 2 + int.from_bytes(head[pos + 2 : pos + 4], "big")
    return None


def pdf_pages(data: str) -> int:
    """Page objects in a base64 PDF (0 when they hide inside compressed object streams)."""
    return len(_PDF_PAGE.findall(_decode_prefix(data, None)))
