"""An appended image is stored as the type its bytes are; data that is no image is refused."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from conversations import ten_per_block

from baton.core.conversation.messages import ImageBlock, MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams

JPEG = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32).decode()


def _image(data: str, media_type: str = "image/png") -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def test_a_jpeg_called_a_png_is_stored_as_a_jpeg(tmp_path: Path) -> None:
    """The API refuses an image whose bytes are not the type given, in that turn and every
    later one: the session could not go on."""
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    prompt = MessageInput(role="user", content=[_image(JPEG), {"type": "text", "text": "see"}])
    (mid,) = session.append([prompt]).message_ids
    (image, _) = session.messages[mid].content
    assert isinstance(image, ImageBlock)
    assert image.source == {"type": "base64", "media_type": "image/jpeg", "data": JPEG}
    store.close()


@pytest.mark.parametrize("data", ["not base64!", base64.b64encode(b"hello").decode(), ""])
def test_data_that_is_no_image_is_refused_and_nothing_is_written(tmp_path: Path, data: str) -> None:
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    written = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match="no base64 PNG, JPEG, GIF or WebP"):
        session.append([MessageInput(role="user", content=[_image(data)])])
    assert session.transcript.path.read_bytes() == written
    store.close()
