"""A request's size in bytes, which the API limits to 32 MB whatever its tokens: the images
and documents a request's body holds, the size of its JSON as sent, counted without making
that JSON, and what to tell a user whose conversation's media take it over.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.media_blocks import HOLDERS, MEDIA_TYPES, media_blocks
from baton.core.conversation.messages import Message

Media = tuple[int, int, int]  # images, documents, the bytes of their base64 data
NO_MEDIA: Media = (0, 0, 0)


class TooLarge(NamedTuple):
    """A request over the API's 32 MB: its size in bytes, the images and documents it
    holds and their bytes of base64, and why the API refuses it, in words."""

    request_bytes: int
    images: int
    documents: int
    media_bytes: int
    why: str


def request_too_large(body: dict[str, Any]) -> TooLarge | None:
    """The size in bytes of a request of this body (its JSON, as sent) and why the API
    refuses it, when it is over the API's 32 MB on a whole request (413 request_too_large,
    whatever its tokens: eight screenshots of 4.9 MB are about 13K tokens but 39 MB); None
    when it fits. Only the images and documents it holds can take it there, so a body whose
    media are far under the limit is not measured."""
    images, documents, media = held_media(body)
    if media <= MAX_REQUEST_BYTES // 2:
        return None
    # the JSON without the base64, and the base64 beside it (ASCII, sent as it is): the
    # size of the whole without making 32 MB of text on the event loop to count it
    rest = json.dumps(_without_data(body), separators=(",", ":"), ensure_ascii=False)
    size = len(rest.encode()) + media
    if size <= MAX_REQUEST_BYTES:
        return None
    held = held_words(images, documents)
    why = (
        f"the request would be {size:,} bytes, over the API's limit of {MAX_REQUEST_BYTES:,} "
        f"(32 MB) on a whole request, whatever its tokens: the {held} it holds "
        f"{are_word(images + documents)} {media:,} bytes of base64. {MEDIA_ADVICE}"
    )
    return TooLarge(size, images, documents, media, why)


# the way out of a conversation whose media take its requests over the limit (the meter
# says it too), and what a refused send adds
MEDIA_WAY_OUT = (
    "Compact the span of the conversation holding them (a summary keeps no image or "
    "document), or remove them (rewind to before them)"
)
MEDIA_ADVICE = f"{MEDIA_WAY_OUT}, then send again with no content to continue"


def held_media(body: dict[str, Any]) -> Media:
    """The images and documents a request's body holds, and their bytes of base64."""
    messages = body.get("messages") or []
    return blocks_media(
        block
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
    )


def message_media(message: Message) -> Media:
    """The images and documents a stored message holds (its blocks, a tool result's
    content), and their bytes of base64: what it adds to every request that sends it.
    A message of text alone (most) is passed over at a glance: every message a view takes
    in is looked at."""
    for block in message.content:
        if block.type in HOLDERS:
            return blocks_media(message.content)
    return NO_MEDIA


def messages_media(messages: Iterable[Message], before: Media = NO_MEDIA) -> Media:
    """`before` with the images and documents of `messages` (`message_media`) added."""
    images, documents, size = before
    for message in messages:
        held = message_media(message)
        images, documents, size = images + held[0], documents + held[1], size + held[2]
    return images, documents, size


def blocks_media(blocks: Iterable[object]) -> Media:
    """The images and documents among content blocks (a tool result's content too) that
    hold base64 data, and their bytes of it (`media_blocks`)."""
    images = documents = size = 0
    for kind, source in media_blocks(blocks):
        data = _source_data(source)
        if data is not None:
            images += kind == "image"
            documents += kind == "document"
            size += len(data)
    return images, documents, size


def media_pivot(view: Sequence[Message]) -> str | None:
    """The message a compaction of the span holding the view's images and documents runs up
    to: the last that holds one, short of the view's last message (the prompt a send is
    about to send stays verbatim); None when no other holds one."""
    for message in reversed(view[:-1]):
        if message_media(message)[2]:
            return message.id
    return None


def kept_media_warning(view: Sequence[Message]) -> str | None:
    """What a compaction that leaves `view` should say when the images and documents it
    keeps verbatim are over the API's 32 MB on their own: every request after it refused,
    whatever its tokens (`all` keeps its recent window whole, screenshots and all)."""
    images, documents, media = messages_media(view)
    if media <= MAX_REQUEST_BYTES:
        return None
    return (
        f"The {held_words(images, documents)} it keeps verbatim {are_word(images + documents)} "
        f"{media:,} bytes of base64, over the API's limit of {MAX_REQUEST_BYTES:,} (32 MB) on "
        "a whole request: every request after it would be refused, whatever its tokens. "
        "Compact up to the last of them instead (a summary keeps no image or document)."
    )


def message_bytes(message: Message) -> int:
    """The bytes of `message` in a request's `messages` (its JSON as sent, the base64 of its
    images and documents counted without copying it into that JSON), with the turns as
    stored (a request merges some and leaves out some thinking: a few bytes)."""
    item = {"role": message.role, "content": [_dumped(b) for b in message.content]}
    rest = json.dumps(_without_data(item), separators=(",", ":"), ensure_ascii=False)
    return len(rest.encode()) + message_media(message)[2]


def request_bytes_of(messages: int, count: int, system: str | None, model: str) -> int:
    """About the size in bytes of a request under `system` whose `count` messages are
    `messages` bytes (`message_bytes`): the meter's figure, without the tools and the next
    prompt, which add a few KB."""
    frame: dict[str, Any] = {"model": model, "system": system, "messages": []}
    head = len(json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode())
    return head + messages + max(0, count - 1)  # the commas between them


def _dumped(block: Any) -> Any:
    return block.model_dump(mode="json", exclude_none=True)


def media_advice(body: dict[str, Any]) -> str:
    """What to do about a request the API refused for its bytes: the images and documents
    it held, and how to take them out of the conversation."""
    images, documents, media = held_media(body)
    if not images + documents:
        return "Compact the conversation or start a new session, then send again"
    held = f"The {held_words(images, documents)} it held {are_word(images + documents)}"
    return f"{held} {media:,} bytes of base64. {MEDIA_ADVICE}"


def held_words(images: int, documents: int) -> str:
    """ "7 images", "1 image and 2 documents"."""
    return " and ".join(
        f"{count:,} {name}{'s' if count != 1 else ''}"
        for count, name in ((images, "image"), (documents, "document"))
        if count
    )


def _base64_data(item: dict[str, Any]) -> str | None:
    """The base64 data of an image or document block (an API dict); None for any other."""
    return _source_data(item.get("source")) if item.get("type") in MEDIA_TYPES else None


def _source_data(source: object) -> str | None:
    """The base64 data of an image's or a document's source; None for any other source."""
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    data = source.get("data")
    return data if isinstance(data, str) else None


def _without_data(value: Any) -> Any:
    """`value` with the base64 data of its images and documents left empty (a copy)."""
    if isinstance(value, list):
        return [_without_data(item) for item in value]
    if not isinstance(value, dict):
        return value
    if _base64_data(value) is not None:
        value = {**value, "source": {**value["source"], "data": ""}}
    return {key: _without_data(item) for key, item in value.items()}


def are_word(count: int) -> str:
    return "is" if count == 1 else "are"
