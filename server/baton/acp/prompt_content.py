"""A prompt's ACP content blocks as the user message Baton stores: text, images, resource
links (the file read, through the client when it offers it) and embedded resources; the
files named join the working set a compaction restores."""

from __future__ import annotations

import base64
import binascii
import re
import stat
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from baton.acp.errors import invalid
from baton.acp.linked_files import MAX_FILE_BYTES, MAX_FILE_CHARS, TooLarge, Unread, disk_text
from baton.core.conversation.files import NotRegularFile, kind_of
from baton.core.conversation.image_header import image_type
from baton.core.conversation.media import (
    IMAGE_TYPES,
    is_pdf,
    pdf_too_large,
    too_large,
    too_wide,
)
from baton.core.conversation.messages import (
    SELECTION,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
)
from baton.core.conversation.records import unwritable
from baton.core.workspace.editor_files import uri_to_path

_LINES = re.compile(r"L(\d+)(?:[:-]L?(\d+))?")  # a URI's lines: Zed's `#L2:3`, `#L2-L3`

AcpBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
Reader = Callable[[Path], Awaitable[str | None]]


@dataclass
class PromptContent:
    """The user message's blocks, the files it named (path -> the text it carried, or
    None when it was read from the disk), and the user's own words (its text blocks, not
    the files' text: what a title is made of)."""

    blocks: list[ContentBlock] = field(default_factory=list)
    files: dict[str, str | None] = field(default_factory=dict)
    said: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.said)


def fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}" if not text.endswith("\n") else f"{fence}\n{text}{fence}"


def file_text(path: str, text: str, part: str | None = None) -> str:
    """The text of a file attached whole, or of the `part` of it a selection holds (its
    heading says so: a selection shows its lines, not the file)."""
    heading = _heading(path, part)
    if len(text) > MAX_FILE_CHARS:
        return f"{heading} (not included: {len(text):,} characters is too large)"
    return f"{heading}\n{fenced(text)}"


def _heading(path: str, part: str | None) -> str:
    return f"{SELECTION}: {path} ({part})" if part else f"Attached file: {path}"


def _part(uri: str) -> str | None:
    """The part of its file a resource's URI names (`#L2:3`: lines 2-3), as a heading
    says it; None for the whole file."""
    fragment = urlsplit(uri).fragment
    if not fragment:
        return None
    lines = _LINES.fullmatch(fragment)
    if lines is None:
        return f"#{fragment}"
    return f"lines {lines[1]}-{lines[2] or lines[1]}"


def _image(data: str, mime: str, where: str) -> ImageBlock:
    """The image, typed as its bytes are: the API refuses an image whose bytes are not the
    type given ("Image does not match the provided media type"), and a stored message it
    refuses fails every later turn of the session; a client may call any screenshot a PNG."""
    if mime not in IMAGE_TYPES:
        raise invalid(f"{where}: image type {mime!r} is not one of {', '.join(IMAGE_TYPES)}")
    large = too_large(data)
    if large is not None:
        raise invalid(f"{where}: the image is too large: {large}")
    decoded = _base64(data, where)
    found = image_type(decoded)
    if found is None:
        raise invalid(f"{where}: the data is no PNG, JPEG, GIF or WebP image")
    wide = too_wide(decoded)
    if wide is not None:
        raise invalid(f"{where}: the image is too large: {wide}")
    return ImageBlock(source={"type": "base64", "media_type": found, "data": data})


def _pdf(data: str, where: str) -> DocumentBlock:
    large = pdf_too_large(data)  # checked before the data is decoded
    if large is not None:
        raise invalid(f"{where}: the PDF is too large: {large}")
    if not is_pdf(_base64(data, where)):
        raise invalid(f"{where}: the data is no PDF")
    return DocumentBlock(source={"type": "base64", "media_type": "application/pdf", "data": data})


def _base64(data: str, where: str) -> bytes:
    """What `data` decodes to when it is base64 of something: the API refuses anything
    else, and a stored message it refuses would fail every later turn of the session."""
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(f"{where}: the data is not base64") from None
    if not decoded:
        raise invalid(f"{where}: the data is empty")
    return decoded


def _local_path(uri: str, where: str) -> Path | None:
    """The path a `file:` URI names (None for another scheme); `invalid_params` for one
    holding a NUL byte or a lone surrogate (a JSON escape), which no file name has: the
    disk refuses to look either up."""
    path = uri_to_path(uri)
    if path is not None and "\x00" in str(path):
        raise invalid(f"{where}: the URI {uri!r} names no usable path (it holds a NUL byte)")
    if path is not None and unwritable(str(path)) is not None:
        why = "it holds a lone surrogate, no UTF-8 text"
        raise invalid(f"{where}: the URI {uri!r} names no usable path ({why})")
    return path


async def _link(block: ResourceContentBlock, where: str, read: Reader, out: PromptContent) -> None:
    path = _local_path(block.uri, where)
    if path is None or not path.is_absolute():
        out.blocks.append(TextBlock(text=f"Linked resource: {block.uri} ({block.name})"))
        return
    try:
        found = path.stat()
    except OSError:
        found = None  # not on this disk: the client may still have it
    if found is not None and not stat.S_ISREG(found.st_mode):
        # a FIFO would block the read, a device never end: only regular files are read
        kind = kind_of(found.st_mode)
        out.blocks.append(TextBlock(text=f"Linked file: {path} (not included: {kind})"))
        return
    size = found.st_size if found is not None else 0
    if size > MAX_FILE_BYTES:
        _too_large(path, size, out)
        return
    try:
        text = await read(path)
    except NotRegularFile as exc:  # put in place of the file checked, by another program
        out.blocks.append(
            TextBlock(text=f"Linked file: {path} (not included: {kind_of(exc.mode)})")
        )
        return
    except TooLarge as exc:  # grown since its check
        _too_large(path, exc.size, out)
        return
    except Unread as exc:  # the note says why, so the model (and the user) need not guess
        out.blocks.append(TextBlock(text=f"Linked file: {path} (not included: {exc.why})"))
        return
    if text is None:
        out.blocks.append(TextBlock(text=f"Linked file: {path} (it could not be read)"))
        return
    out.blocks.append(TextBlock(text=file_text(str(path), text)))
    out.files[str(path)] = None


def _too_large(path: Path, size: int, out: PromptContent) -> None:
    out.blocks.append(TextBlock(text=f"Attached file: {path} (not included: {size:,} bytes)"))
    out.files[str(path)] = None


def _embedded(block: EmbeddedResourceContentBlock, where: str, out: PromptContent) -> None:
    resource = block.resource
    path = _local_path(resource.uri, where)
    name = str(path) if path is not None else resource.uri
    if isinstance(resource, BlobResourceContents):
        mime = resource.mime_type or ""
        if mime in IMAGE_TYPES:
            out.blocks.append(_image(resource.blob, mime, where))
        elif mime == "application/pdf":
            out.blocks.append(_pdf(resource.blob, where))
        else:
            raise invalid(
                f"{where}: a binary resource of type {mime or 'unknown'!r} cannot be sent"
            )
        return
    part = _part(resource.uri) if path is not None else None
    if "\x00" in resource.text:  # no text file holds one: a binary file read as text
        note = f"{_heading(name, part)} (not included: a binary file, it holds a NUL byte)"
        out.blocks.append(TextBlock(text=note))
        return
    out.blocks.append(TextBlock(text=file_text(name, resource.text, part)))
    if path is not None and path.is_absolute():
        # the editor's text, saved or not; a selection's lines are not the file's text
        out.files[str(path)] = resource.text if part is None else None


def _check_writable(made: list[ContentBlock], where: str) -> None:
    """`invalid_params` for a block whose text holds a lone surrogate (a JSON escape such as
    "\\ud800", no UTF-8 text): the transcript cannot store it, and it is refused here, before
    the prompt's words name the session, not once the turn stores it."""
    if unwritable(made) is not None:
        raise invalid(
            f"{where}: its text cannot be stored: it holds a lone surrogate, no UTF-8 text"
        )


async def prompt_content(blocks: Sequence[AcpBlock | Any], read: Reader) -> PromptContent:
    """The user message of these blocks; `invalid_params` (nothing stored) for a block
    Baton cannot send: audio, an image of another type, not base64 or over the API's
    5 MB, a PDF over its 32 MB a request may hold, a file URI that
    names no usable path, text holding a lone surrogate, an empty prompt."""
    out = PromptContent()
    for n, block in enumerate(blocks):
        where = f"prompt.{n}"
        made = len(out.blocks)
        if isinstance(block, TextContentBlock):
            if block.text:
                out.blocks.append(TextBlock(text=block.text))
                out.said.append(block.text)
        elif isinstance(block, ImageContentBlock):
            out.blocks.append(_image(block.data, block.mime_type, where))
        elif isinstance(block, ResourceContentBlock):
            await _link(block, where, read, out)
        elif isinstance(block, EmbeddedResourceContentBlock):
            _embedded(block, where, out)
        elif isinstance(block, AudioContentBlock):
            raise invalid(f"{where}: audio is not supported (promptCapabilities.audio is false)")
        else:
            raise invalid(f"{where}: unknown content block")
        _check_writable(out.blocks[made:], where)
    if not out.blocks or not any(
        not isinstance(b, TextBlock) or b.text.strip() for b in out.blocks
    ):
        raise invalid("the prompt is empty")
    return out


__all__ = ["PromptContent", "RequestError", "Unread", "disk_text", "prompt_content"]
