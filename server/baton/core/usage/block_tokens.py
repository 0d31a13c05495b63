"""What each content block counts for: text its text, a tool call its name and JSON input, a
tool result its content, thinking its text, media their own rules (`media_tokens.py`), an
unknown block its JSON. A message's blocks are counted here (`message_tokens.py`)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any

from baton.core.conversation.media_blocks import media_blocks
from baton.core.conversation.messages import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from baton.core.usage.media_tokens import MEDIA_FLAT, PDF_PER_PAGE, image_tokens, pdf_pages


class BlockTokens(ABC):
    """Raw tokens of content blocks, on the texts' and JSON's counts of the class it is
    mixed into."""

    @abstractmethod
    def count_text(self, text: str) -> int: ...

    @abstractmethod
    def count_json(self, obj: object) -> int: ...

    def count_blocks(self, blocks: Iterable[object]) -> int:
        count = self._count_block
        return sum([count(block) for block in blocks])

    def count_media(self, blocks: Iterable[object]) -> int:
        """The part of `count_blocks(blocks)` its images and documents make (in a tool
        result's content too): figures in the API's own units (`media_tokens.py`), which
        calibration leaves as they are. A document of text counts as text, not here."""
        total = 0
        for kind, source in media_blocks(blocks):
            total += image_tokens(source) if kind == "image" else self._document_media(source)
        return total

    def _count_block(self, block: object) -> int:
        # the validated block classes first: their fields are typed, so no lookups by name
        if isinstance(block, TextBlock):
            return self.count_text(block.text)
        if isinstance(block, ToolResultBlock):
            result = block.content
            if isinstance(result, str):
                return self.count_text(result)
            return self.count_blocks(result) if isinstance(result, list) else 0
        if isinstance(block, ToolUseBlock):
            name, arguments = block.name, block.input
            return self.count_text(name) + self.count_json(arguments or {})
        if isinstance(block, ThinkingBlock):
            return self.count_text(block.thinking)
        return self._count_other(block)

    def _count_other(self, block: object) -> int:
        if isinstance(block, str):
            return self.count_text(block)
        kind = _field(block, "type")
        if kind == "text":
            return self.count_text(str(_field(block, "text") or ""))
        if kind == "tool_use":
            name = str(_field(block, "name") or "")
            return self.count_text(name) + self.count_json(_field(block, "input") or {})
        if kind == "tool_result":
            content = _field(block, "content")
            if isinstance(content, str):
                return self.count_text(content)
            return self.count_blocks(content) if isinstance(content, list) else 0
        if kind == "thinking":
            return self.count_text(str(_field(block, "thinking") or ""))
        if kind == "compaction":  # the API's summary; its signature is not context
            return self.count_text(str(_field(block, "content") or ""))
        if kind == "redacted_thinking":
            return math.ceil(len(str(_field(block, "data") or "")) / 4)
        if kind == "image":
            return image_tokens(_field(block, "source"))
        if kind == "document":
            return self._document_tokens(_field(block, "source"))
        dumped = block.model_dump() if hasattr(block, "model_dump") else block
        return self.count_json(dumped)  # a block type this version does not know

    def _document_tokens(self, source: object) -> int:
        if not isinstance(source, Mapping):
            return MEDIA_FLAT
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return self.count_text(source["data"])
        if source.get("type") == "content" and isinstance(source.get("content"), list):
            return self.count_blocks(source["content"])
        if source.get("type") == "base64" and source.get("media_type") == "application/pdf":
            pages = pdf_pages(str(source.get("data") or ""))
            return pages * PDF_PER_PAGE if pages else MEDIA_FLAT
        return MEDIA_FLAT

    def _document_media(self, source: object) -> int:
        """The part of `_document_tokens(source)` that is not text."""
        if isinstance(source, Mapping):
            if source.get("type") == "text" and isinstance(source.get("data"), str):
                return 0
            if source.get("type") == "content" and isinstance(source.get("content"), list):
                return self.count_media(source["content"])
        return self._document_tokens(source)


def _field(block: object, name: str) -> Any:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)
