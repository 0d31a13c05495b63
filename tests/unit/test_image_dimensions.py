"""An image over 8,000 pixels on a side (a full-page screenshot of a long page) is refused
by the API in every request that holds it ("image dimensions exceed max allowed size"),
so it is held to that limit wherever a message enters, as to the 5 MB: an append, a tool
result, an ACP prompt refuse it; an import puts a text saying why in its place."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import ImageContentBlock
from conversations import ten_per_block

from baton.acp import prompt_content as pc
from baton.core.conversation.image_header import image_size
from baton.core.conversation.messages import ImageBlock, MessageInput, TextBlock
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code import import_with_report
from baton.core.model_api.api_messages import to_api_messages


def png(width: int, height: int) -> bytes:
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + ihdr + b"\x00" * 4


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    size = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    sof2 = b"\xff\xc2\x00\x11\x08" + size + b"\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + app0 + b"\xff\xff" + sof2 + b"\xff\xda\x00\x08"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + width.to_bytes(2, "little") + height.to_bytes(2, "little") + b"\x00" * 4


def webp(width: int, height: int) -> bytes:
    vp8x = b"VP8X" + (10).to_bytes(4, "little") + b"\x00" * 4
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + (22).to_bytes(4, "little") + b"WEBP" + vp8x + size


def webp_lossless(width: int, height: int) -> bytes:
    bits = (width - 1) | (height - 1) << 14
    return b"RIFF\x00\x00\x00\x00WEBPVP8L\x05\x00\x00\x00\x2f" + bits.to_bytes(4, "little")


def webp_lossy(width: int, height: int) -> bytes:
    frame = b"\x00\x00\x00\x9d\x01\x2a" + width.to_bytes(2, "little") + height.to_bytes(2, "little")
    return b"RIFF\x00\x00\x00\x00WEBPVP8 \x0a\x00\x00\x00" + frame


MAKERS = [png, jpeg, gif, webp, webp_lossless, webp_lossy]


@pytest.mark.parametrize("make", MAKERS)
def test_an_images_size_is_read_from_its_header(make: Any) -> None:
    assert image_size(make(1280, 12000)) == (1280, 12000)
    assert image_size(make(8000, 3)) == (8000, 3)


def test_a_size_that_cannot_be_read_is_none() -> None:
    assert image_size(b"\xff\xd8\xff\xe0\x00\x10JFIF") is None  # cut short before its frame
    assert image_size(b"not an image") is None


@pytest.mark.parametrize(
    "data",
    [png(0, 12000), png(1280, 0), gif(0, 0), gif(0, 9000), webp_lossy(0, 600), jpeg(800, 0)],
    ids=["png-width", "png-height", "gif", "gif-width", "webp-lossy", "jpeg-height"],
)
def test_a_header_that_says_a_side_of_zero_gives_no_size(data: bytes) -> None:
    # no decoder takes such a PNG, JPEG or WebP (libpng, libjpeg, libwebp refuse it); a
    # GIF's frames may give another size than its screen's 0: its header says none
    assert image_size(data) is None


def _image(data: bytes) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode()
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": encoded},
    }


@pytest.mark.parametrize("make", MAKERS)
def test_an_appended_image_over_8000_pixels_on_a_side_is_refused_and_nothing_is_written(
    tmp_path: Path, make: Any
) -> None:
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    written = session.transcript.path.read_bytes()
    shot = MessageInput(role="user", content=[TextBlock(text="see"), _image(make(1280, 12000))])
    with pytest.raises(
        InvalidParams,
        match=r"block 1 \(image\): it is 1,280 x 12,000 pixels, over the API's limit of 8,000",
    ):
        session.append([shot])
    assert session.transcript.path.read_bytes() == written
    (mid,) = session.append(
        [MessageInput(role="user", content=[_image(make(8000, 8000))])]
    ).message_ids
    assert isinstance(session.messages[mid].content[0], ImageBlock)
    store.close()


def test_a_tool_results_image_over_8000_pixels_is_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    call = {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {"fullPage": True}}
    session.append(
        [MessageInput(role="user", content="Shoot"), MessageInput(role="assistant", content=[call])]
    )
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [_image(png(1280, 9001))]}
    with pytest.raises(InvalidParams, match=r"block 0 \(tool_result\) part 0 \(image\): it is"):
        session.append([MessageInput(role="user", content=[result])])
    store.close()


async def test_an_acp_prompts_image_over_8000_pixels_is_refused() -> None:
    data = base64.b64encode(jpeg(9000, 600)).decode()
    block = ImageContentBlock(type="image", data=data, mime_type="image/jpeg")

    async def disk(path: Path) -> str | None:
        return None

    with pytest.raises(RequestError) as refused:
        await pc.prompt_content([block], disk)
    assert "prompt.0: the image is too large: it is 9,000 x 600 pixels" in str(refused.value)


def test_an_imported_image_over_8000_pixels_goes_as_a_text_saying_why(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    def record(n: int, kind: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message |= {"id": f"msg_{n}", "model": "claude-sonnet-4-5", "stop_reason": "end_turn"}
        parent = f"00000000-0000-4000-8000-{n - 1:012d}" if n > 1 else None
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        return {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "5e",
            "message": message,
        }

    records = [
        record(1, "user", [_image(png(1440, 12000)), {"type": "text", "text": "the page"}]),
        record(2, "assistant", [{"type": "text", "text": "long"}]),
    ]
    path = tmp_path / "page.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    session, report = import_with_report(path, plain_store)

    first = to_api_messages(session.view_messages())[0]["content"][0]
    wide = "it is 1,440 x 12,000 pixels, over the API's limit of 8,000 on either side"
    assert first == {"type": "text", "text": f"[image left out: {wide}]"}
    assert report.repairs == [
        "record 00000000-0000-4000-8000-000000000001: "
        f"block 0 (image): {wide}; imported as a text saying so"
    ]
