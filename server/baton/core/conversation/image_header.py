"""What an image's header says: the type its signature is (of those the API takes), and
its width and height, read without decoding the image."""

from __future__ import annotations


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


def image_size(data: bytes) -> tuple[int, int] | None:
    """An image's width and height as its header says, when it can be read there as a
    decoder reads it (a WebP's bitstream with its signature, a JPEG's frame before any
    scan); None when it cannot, or when it says a side of 0 pixels: no decoder takes such
    a PNG, JPEG or WebP, and a GIF's frames then give the size, not its header."""
    size = _header_size(data)
    if size is None or 0 in size:
        return None
    return size


def _header_size(data: bytes) -> tuple[int, int] | None:
    found = image_type(data)
    if found == "image/png" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if found == "image/gif" and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if found == "image/webp":
        return _webp_size(data)
    if found == "image/jpeg":
        return _jpeg_size(data)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        return width, int.from_bytes(data[28:30], "little") & 0x3FFF
    return None


# the JPEG markers of a frame's header (SOF0-SOF15 but DHT, JPG and DAC), which hold its size
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """A JPEG's size from its frame header, found by walking the segments before it."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # no length follows
            at += 2
            continue
        if marker in _SOF:
            if at + 9 > len(data):
                return None
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            return int.from_bytes(data[at + 7 : at + 9], "big"), height
        if marker in (0xD9, 0xDA):  # end of image, or scan data before any frame header
            return None
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return None
