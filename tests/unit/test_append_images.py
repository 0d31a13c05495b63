"""An appended image is stored as the type its bytes are; data that is no image, or an image
over the API's limit, is refused."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from conversations import ten_per_block

from baton.core.conversation.media import MAX_IMAGE_BASE64
from baton.core.conversation.messages import ImageBlock, MessageInput, TextBlock, ToolResultBlock
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.services import service_on

TEXT = {"type": "text", "text": "see"}
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


PNG_HEAD = b"\x89PNG\r\n\x1a\n"
# 4 MB of PNG: under 5 MB as bytes, over it as the base64 the API measures ("image exceeds
# 5 MB maximum: 5592416 bytes > 5242880 bytes")
OVER = base64.b64encode(PNG_HEAD + b"\x00" * (4 * 1024 * 1024)).decode()
AT_LIMIT = base64.b64encode(PNG_HEAD + b"\x00" * (MAX_IMAGE_BASE64 // 4 * 3 - 8)).decode()


def test_an_image_over_the_apis_limit_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """Stored, it would be sent in every later request of the session, each refused."""
    assert len(AT_LIMIT) == MAX_IMAGE_BASE64
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    written = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match=r"block 1 \(image\).*5,242,880 \(5 MB\)"):
        session.append([MessageInput(role="user", content=[TEXT, _image(OVER)])])
    assert session.transcript.path.read_bytes() == written
    session.append([MessageInput(role="user", content=[TEXT, _image(AT_LIMIT)])])
    store.close()


async def test_a_send_with_an_image_over_the_limit_asks_nothing_and_stores_nothing(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = service_on(tmp_path / "data", estimator)
    sid = service.create("shots").session_id
    path = service.store.get(sid).transcript.path
    written = path.read_bytes()
    blocks = [TextBlock(text="see"), ImageBlock(source=_image(OVER)["source"])]  # type: ignore[arg-type]
    with pytest.raises(InvalidParams, match="over the API's limit"):
        await service.replies.send(sid, list(blocks))
    assert fake_anthropic.message_requests() == []
    assert path.read_bytes() == written
    service.store.close()


def test_a_tool_results_image_over_the_limit_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    """A screenshot a tool returned goes with its result in every later request."""
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    call = {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}
    session.append(
        [
            MessageInput(role="user", content="Take a screenshot"),
            MessageInput(role="assistant", content=[call]),
        ]
    )
    written = session.transcript.path.read_bytes()

    def result(data: str) -> MessageInput:
        block = {"type": "tool_result", "tool_use_id": "t1", "content": [_image(data)]}
        return MessageInput(role="user", content=[block])

    with pytest.raises(InvalidParams, match=r"block 0 \(tool_result\) part 0 \(image\).*5 MB"):
        session.append([result(OVER)])
    assert session.transcript.path.read_bytes() == written
    session.append([result(AT_LIMIT)])
    store.close()


def test_a_tool_results_images_are_typed_as_their_bytes_and_checked(tmp_path: Path) -> None:
    """A tool result's image goes with it in every later request, as a prompt's does: a
    JPEG it calls a PNG, or data that is no image, failed each of them."""
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    call = {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}
    session.append(
        [MessageInput(role="user", content="Shoot"), MessageInput(role="assistant", content=[call])]
    )

    def result(data: str) -> MessageInput:
        parts = [{"type": "text", "text": "the shot"}, _image(data)]
        return MessageInput(
            role="user", content=[{"type": "tool_result", "tool_use_id": "t1", "content": parts}]
        )

    written = session.transcript.path.read_bytes()
    with pytest.raises(
        InvalidParams, match=r"block 0 \(tool_result\) part 1 \(image\): its data is no"
    ):
        session.append([result(base64.b64encode(b"hello").decode())])
    assert session.transcript.path.read_bytes() == written
    (mid,) = session.append([result(JPEG)]).message_ids
    (block,) = session.messages[mid].content
    assert isinstance(block, ToolResultBlock) and isinstance(block.content, list)
    assert block.content[1]["source"] == {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": JPEG,
    }
    store.close()
