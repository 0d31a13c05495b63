"""A send refused for its size: over the blocking limit in tokens, or over the API's bytes,
before it goes out or as the API answered; each error says what to do about it."""

from __future__ import annotations

from typing import Any

from baton.core.conversation import request_bytes
from baton.core.errors import PromptTooLong
from baton.core.usage.budget import Usage

ADVICE = (
    "Compact the conversation (baton/compact, or the 'Compact conversation' action) or "
    "start a new session, then send again with no content to continue."
)


def check_room(usage: Usage) -> None:
    """PromptTooLong when the view is at the blocking limit or past it."""
    if usage.used_tokens >= usage.blocking_limit:
        raise PromptTooLong(
            f"the conversation is too long to send ({usage.used_tokens:,} tokens, limit "
            f"{usage.blocking_limit:,}). {ADVICE}",
            actual=usage.used_tokens,
            limit=usage.blocking_limit,
        )


def check_bytes(body: dict[str, Any]) -> None:
    """PromptTooLong when the request is over the API's bytes: it would refuse it (413),
    and every later one like it."""
    big = request_bytes.request_too_large(body)
    if big is not None:
        raise PromptTooLong(
            f"{big.why}.",
            requestBytes=big.request_bytes,
            images=big.images,
            documents=big.documents,
            mediaBytes=big.media_bytes,
        )


def over_bytes(exc: PromptTooLong) -> bool:
    """Whether the API refused the request for its bytes, not its tokens (nothing to
    calibrate on)."""
    return exc.data.get("type") == "request_too_large"


def refused(exc: PromptTooLong, body: dict[str, Any]) -> PromptTooLong:
    """The API's refusal of the request `body` as too long, with what to do about it: the
    images and documents it held when it was over the API's bytes."""
    if over_bytes(exc):
        images, documents, media_bytes = request_bytes.held_media(body)
        return PromptTooLong(
            f"{exc.message.rstrip('.')}. {request_bytes.media_advice(body)}.",
            **exc.data,
            images=images,
            documents=documents,
            mediaBytes=media_bytes,
        )
    return PromptTooLong(f"{exc.message}. {ADVICE}", actual=exc.actual, limit=exc.limit)
