"""A model's reply built from the Messages API's stream events, and what a reply cut off
partway amounts to."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import ValidationError

from baton.core.conversation.messages import (
    CONTENT_ADAPTER,
    ApiUsage,
    ContentBlock,
    Message,
    TextBlock,
)
from baton.core.conversation.session import INTERRUPTED
from baton.core.model_api.api_messages import THINKING_TYPES

log = logging.getLogger(__name__)

OnText = Callable[[str], Awaitable[None] | None]


@dataclass
class ModelReply:
    """One assistant response (or the part of it that arrived before a stop)."""

    content: list[ContentBlock]
    usage: ApiUsage = field(default_factory=ApiUsage)
    stop_reason: str | None = None
    api_message_id: str | None = None
    model: str | None = None

    def message(
        self,
        message_id: str,
        model: str,
        prefix_hash: str,
        note_tokens: int = 0,
        *,
        interrupted: bool = False,
    ) -> Message:
        """The assistant message this reply is recorded as (`model` unless the API named
        one; `prefix_hash`, the fingerprint of the request it answers; `note_tokens`, the
        budget note that request carried). A reply cut short keeps no usage (it would
        anchor the count on a request that never finished) and stops as interrupted."""
        return Message(
            id=message_id,
            role="assistant",
            content=self.content,
            api_message_id=self.api_message_id,
            usage=None if interrupted else self.usage,
            model=self.model or model,
            stop_reason=INTERRUPTED if interrupted else self.stop_reason,
            prefix_hash=prefix_hash,
            note_tokens=note_tokens or None,
        )


class ReplyBuilder:
    """Builds the reply from stream events and knows what a cut-off reply amounts to."""

    def __init__(self) -> None:
        self.api_message_id: str | None = None
        self.model: str | None = None
        self.usage = ApiUsage()
        self.stop_reason: str | None = None
        self.done: dict[int, ContentBlock] = {}  # finished blocks by index
        self.current = 0  # index of the block now streaming
        self.open_text: dict[int, str] = {}  # text of blocks still streaming
        self.final: ModelReply | None = None
        self.callback_error: Exception | None = None  # what `on_text` raised, if it did

    async def feed(self, event: Any, on_text: OnText | None) -> None:
        kind = event.type
        if kind == "message_start":
            self.api_message_id = event.message.id
            self.model = event.message.model
            self.usage = api_usage(event.message.usage)
        elif kind == "content_block_start":
            self.current = event.index
            if event.content_block.type == "text":
                self.open_text[event.index] = ""
        elif kind == "text":
            self.open_text[self.current] = self.open_text.get(self.current, "") + event.text
            if on_text is not None and event.text:
                try:
                    if inspect.isawaitable(result := on_text(event.text)):
                        await result
                except Exception as exc:
                    self.callback_error = exc
                    raise
        elif kind == "content_block_stop":
            self.open_text.pop(event.index, None)
            block = baton_block(event.content_block)
            if block is not None:
                self.done[event.index] = block
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason
            self.usage = self.usage.model_copy(
                update={"output_tokens": event.usage.output_tokens or 0}
            )
        elif kind == "message_stop":
            message = event.message
            blocks = [b for b in (baton_block(x) for x in message.content) if b is not None]
            self.final = ModelReply(
                content=blocks,
                usage=api_usage(message.usage),
                stop_reason=message.stop_reason or self.stop_reason,
                api_message_id=message.id,
                model=message.model,
            )

    def partial(self) -> ModelReply | None:
        """Finished blocks plus the text of an unfinished one, without unfinished calls and
        thinking (they cannot run or go back) nor thinking that ends them (never sent: a
        reply cut before its text keeps nothing). None when nothing usable arrived."""
        blocks = dict(self.done)
        for index, text in self.open_text.items():
            if text:
                blocks[index] = TextBlock(text=text)
        content = [blocks[i] for i in sorted(blocks)]
        while content and (_blank(content[-1]) or content[-1].type in THINKING_TYPES):
            content.pop()  # ending a reply, no request sends these
        if not content:
            return None
        return ModelReply(
            content=content,
            usage=self.usage,
            stop_reason=self.stop_reason,
            api_message_id=self.api_message_id,
            model=self.model,
        )


def _blank(block: ContentBlock) -> bool:
    return isinstance(block, TextBlock) and not block.text.strip()


def api_usage(raw: Any) -> ApiUsage:
    """An SDK usage object as Baton's ApiUsage (missing figures are 0)."""

    def pick(name: str) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else 0

    return ApiUsage(
        input_tokens=pick("input_tokens"),
        output_tokens=pick("output_tokens"),
        cache_creation_input_tokens=pick("cache_creation_input_tokens"),
        cache_read_input_tokens=pick("cache_read_input_tokens"),
    )


def baton_block(sdk_block: Any) -> ContentBlock | None:
    """An SDK content block as Baton's block; types Baton cannot store are dropped."""
    raw = cast(dict[str, Any], sdk_block.to_dict(mode="json", exclude_none=True))
    if raw.get("type") == "text":
        raw.pop("parsed_output", None)
    try:
        return CONTENT_ADAPTER.validate_python([raw])[0]
    except ValidationError:
        log.warning("dropped a reply block of unsupported type %r", raw.get("type"))
        return None
