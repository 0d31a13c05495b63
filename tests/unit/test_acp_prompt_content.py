"""A prompt's ACP blocks as the stored user message: text, images, linked and embedded
files (their paths joining the working set), and the blocks refused with nothing stored."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from baton.acp import prompt_content as pc
from baton.core.compaction.working_set.visible import Visible
from baton.core.conversation.messages import DocumentBlock, ImageBlock, Message, TextBlock

PNG = "iVBORw0KGgo="


async def disk(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


async def test_text_images_links_and_embedded_files(tmp_path: Path) -> None:
    linked = tmp_path / "app.py"
    linked.write_text("print(1)\n")
    blocks = [
        TextContentBlock(type="text", text="Look at these"),
        ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
        ResourceContentBlock(type="resource_link", name="app.py", uri=linked.as_uri()),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=(tmp_path / "b.py").as_uri(), text="unsaved = 1"),
        ),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///doc.pdf", blob="JVBERi0=", mime_type="application/pdf"
            ),
        ),
    ]
    made = await pc.prompt_content(blocks, disk)
    kinds = [type(b) for b in made.blocks]
    assert kinds == [TextBlock, ImageBlock, TextBlock, TextBlock, DocumentBlock]
    assert made.blocks[2].text == f"Attached file: {linked}\n```\nprint(1)\n```"  # type: ignore[union-attr]
    assert "unsaved = 1" in made.blocks[3].text  # type: ignore[union-attr]
    assert made.files == {str(linked): None, str(tmp_path / "b.py"): "unsaved = 1"}


async def test_a_huge_linked_file_is_named_not_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.log"
    huge.write_bytes(b"x" * (pc.MAX_FILE_CHARS * 4 + 1))
    read: list[Path] = []

    async def spy(path: Path) -> str | None:
        read.append(path)
        return None

    link = ResourceContentBlock(type="resource_link", name="huge.log", uri=huge.as_uri())
    made = await pc.prompt_content([TextContentBlock(type="text", text="see"), link], spy)
    assert read == []
    assert "not included" in made.blocks[1].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "block",
    [
        ImageContentBlock(type="image", data="not base64!", mime_type="image/png"),
        ImageContentBlock(type="image", data="", mime_type="image/png"),
        ImageContentBlock(type="image", data=PNG, mime_type="image/tiff"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///doc.pdf", blob="not base64!!", mime_type="application/pdf"
            ),
        ),
        AudioContentBlock(type="audio", data=PNG, mime_type="audio/wav"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///a.zip", blob=PNG, mime_type="application/zip"
            ),
        ),
        TextContentBlock(type="text", text="   "),
        # base64, but of no image or PDF: the API refuses it in every later request
        ImageContentBlock(type="image", data="aGVsbG8=", mime_type="image/png"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///doc.pdf", blob="aGVsbG8=", mime_type="application/pdf"
            ),
        ),
        # a NUL byte names no file: the disk's lookup raised, and the client got an
        # internal error
        ResourceContentBlock(type="resource_link", name="a", uri="file:///tmp/a%00b.py"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///a%00b.py", text="x = 1")
        ),
    ],
)
async def test_blocks_baton_cannot_send_are_invalid_params(block: object) -> None:
    with pytest.raises(RequestError) as refused:
        await pc.prompt_content([block], disk)
    assert refused.value.code == -32602
    assert refused.value.data["code"] == "invalid_params"


async def test_a_link_to_what_is_not_a_regular_file_is_named_never_read(tmp_path: Path) -> None:
    """A FIFO would block the read (and the agent with it), a device never end."""
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[Path] = []

    async def spy(path: Path) -> str | None:
        read.append(path)
        return None

    links = [
        ResourceContentBlock(type="resource_link", name="pipe", uri=fifo.as_uri()),
        ResourceContentBlock(type="resource_link", name="zero", uri="file:///dev/zero"),
        ResourceContentBlock(type="resource_link", name="here", uri=tmp_path.as_uri()),
    ]
    made = await pc.prompt_content([TextContentBlock(type="text", text="see"), *links], spy)
    assert read == []
    texts = [b.text for b in made.blocks[1:]]  # type: ignore[union-attr]
    assert texts == [
        f"Linked file: {fifo} (not included: a FIFO)",
        "Linked file: /dev/zero (not included: a device)",
        f"Linked file: {tmp_path} (not included: a directory)",
    ]
    assert made.files == {}


async def test_the_users_words_are_the_text_not_the_files_attached(tmp_path: Path) -> None:
    linked = tmp_path / "app.py"
    linked.write_text("import os\n")
    blocks = [
        ResourceContentBlock(type="resource_link", name="app.py", uri=linked.as_uri()),
        TextContentBlock(type="text", text="Explain this file"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=(tmp_path / "b.py").as_uri(), text="x = 1"),
        ),
    ]
    made = await pc.prompt_content(blocks, disk)
    assert made.text() == "Explain this file"


async def test_an_image_is_typed_as_its_bytes_are() -> None:
    """A JPEG screenshot a client calls a PNG: the API refuses an image whose bytes are not
    the type given, in that request and in every later one that sends the message again."""
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00").decode()
    webp = base64.b64encode(b"RIFF\x1a\x00\x00\x00WEBPVP8 ").decode()
    blocks = [
        ImageContentBlock(type="image", data=jpeg, mime_type="image/png"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(uri="file:///shot.png", blob=webp, mime_type="image/png"),
        ),
        ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
    ]
    made = await pc.prompt_content(blocks, disk)
    types = [b.source["media_type"] for b in made.blocks if isinstance(b, ImageBlock)]
    assert types == ["image/jpeg", "image/webp", "image/png"]


async def test_an_embedded_selection_is_carried_as_its_lines_not_as_the_file(
    tmp_path: Path,
) -> None:
    """A client's selection (an embedded resource whose URI names its lines, `#L2:3` as Zed
    sends it) was carried as "Attached file: PATH" with the two lines, and taken as the
    editor's text of the whole file: the restore after a compaction put the two lines
    back as the file, or, while the prompt was kept, counted them as showing it."""
    app = tmp_path / "app.py"
    app.write_text("".join(f"line {n}\n" for n in range(1, 40)))
    blocks = [
        TextContentBlock(type="text", text="What does this do?"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=f"{app.as_uri()}#L2:3", text="line 2\nline 3\n"),
        ),
    ]
    made = await pc.prompt_content(blocks, disk)
    assert made.blocks[1].text == f"Selection: {app} (lines 2-3)\n```\nline 2\nline 3\n```"  # type: ignore[union-attr]
    assert made.files == {str(app): None}  # the file joins the working set, as on disk
    kept = [Message(role="user", content=made.blocks)]
    assert not Visible(kept, [tmp_path]).shows(app, app.resolve())


async def test_a_linked_file_not_read_says_why(tmp_path: Path) -> None:
    """'it could not be read' left the model (and the user reading the transcript) to guess
    whether the file was missing, binary or in another encoding."""
    binary = tmp_path / "logo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    latin = tmp_path / "notes.txt"
    latin.write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    missing = tmp_path / "gone.py"

    async def read(path: Path) -> str | None:
        return pc.disk_text(path)

    links = [
        ResourceContentBlock(type="resource_link", name=p.name, uri=p.as_uri())
        for p in (binary, latin, missing)
    ]
    made = await pc.prompt_content([TextContentBlock(type="text", text="see"), *links], read)
    assert [b.text for b in made.blocks[1:]] == [  # type: ignore[union-attr]
        f"Linked file: {binary} (not included: a binary file)",
        f"Linked file: {latin} (not included: no UTF-8 text)",
        f"Linked file: {missing} (not included: no such file)",
    ]
    assert made.files == {}


async def test_a_pdf_is_refused_over_the_apis_request_limit_and_taken_at_it() -> None:
    limit = 32 * 1024 * 1024  # base64 characters: the API's limit on a whole request
    head = base64.b64encode(b"%PDF-1.7\n").decode()  # 12 characters, no padding
    at_limit = head + "A" * (limit - len(head))

    def pdf(data: str) -> EmbeddedResourceContentBlock:
        blob = BlobResourceContents(uri="file:///r.pdf", blob=data, mime_type="application/pdf")
        return EmbeddedResourceContentBlock(type="resource", resource=blob)

    made = await pc.prompt_content([pdf(at_limit)], disk)
    assert isinstance(made.blocks[0], DocumentBlock)
    with pytest.raises(RequestError) as refused:
        await pc.prompt_content([pdf(at_limit + "AAAA")], disk)
    assert "prompt.0: the PDF is too large" in str(refused.value)
    assert "33,554,436 bytes of base64" in str(refused.value)


async def test_an_embedded_resource_of_binary_text_is_named_not_included(tmp_path: Path) -> None:
    """An embedded text resource holding a NUL byte (a binary file a client read as text)
    went to the model whole, up to 400,000 characters of noise, where a linked file's bytes
    are named "a binary file", and its text joined the working set as the editor's."""
    path = tmp_path / "logo.png"
    binary = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 100
    block = EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri=path.as_uri(), text=binary)
    )
    made = await pc.prompt_content([TextContentBlock(type="text", text="What is it?"), block], disk)
    note = made.blocks[1].text  # type: ignore[union-attr]
    assert note == f"Attached file: {path} (not included: a binary file, it holds a NUL byte)"
    assert made.files == {}
