"""The summarizer interface, summary-input preparation, and the offline extractive summarizer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from baton.core.compaction.cuts import CountText, approx_tokens, counted_once, remembered
from baton.core.compaction.prompts import check_direction, section_titles
from baton.core.compaction.retention.ledger import PROMPT_PREFIX_CHARS
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.summary import extractive
from baton.core.compaction.summary.user_messages import prompts_section, visible_need
from baton.core.conversation.boundary import Trigger
from baton.core.conversation.messages import (
    CompactionBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
)

EXTRACTIVE_MAX_TOKENS = 6_000
# The summary may grow to this (within the request's bound; what a model's summary may
# take) so that every user message stays visible: its first PROMPT_PREFIX_CHARS
# characters, what the retention check compares. Earlier summaries' prompts are carried
# on in every round, so three rounds of a long session need several times the room.
PROMPTS_MAX_TOKENS = 20_000

Progress = Callable[[str, float | None], None]


@dataclass
class SummaryRequest:
    """What to summarize. `context_before` holds the messages kept verbatim ahead of the span
    (for `from` and `range`); they are context, never part of the summary. `facts` are the
    span's facts when the caller extracted them already (the compaction pipeline does, for
    its retention check): a summarizer that needs them uses these instead of its own pass."""

    direction: str
    messages: list[Message]
    context_before: list[Message] = field(default_factory=list)
    instructions: str | None = None
    trigger: Trigger = "manual"
    transcript_path: str | None = None
    max_tokens: int = 20_000
    facts: SpanFacts | None = None


class Summarizer(Protocol):
    """Turns a request into a summary body (not the wrapper message). Implementations must
    give asyncio cancellation a chance between steps."""

    name: str

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        """The summary body for `request`."""
        ...


_MEDIA_MARKERS = {"image": "[image]", "document": "[document]"}


def _strip_part(part: dict[str, Any]) -> dict[str, Any]:
    marker = _MEDIA_MARKERS.get(str(part.get("type")))
    return {"type": "text", "text": marker} if marker else part


def _strip_block(block: ContentBlock) -> ContentBlock:
    if isinstance(block, CompactionBlock):  # an earlier summary the API wrote, read as text
        return TextBlock(text=f"[summary of the earlier conversation]\n{block.content or ''}")
    if isinstance(block, ImageBlock):
        return TextBlock(text="[image]")
    if isinstance(block, DocumentBlock):
        return TextBlock(text="[document]")
    if isinstance(block, ToolResultBlock) and isinstance(block.content, list):
        return block.model_copy(update={"content": [_strip_part(p) for p in block.content]})
    return block


_MEDIA_BLOCKS = frozenset({ImageBlock, DocumentBlock, CompactionBlock})


def _has_media(block: ContentBlock) -> bool:
    """True for a block `_strip_block` rewrites (media, and the API's own summary); tested
    by exact type (see `blocks`), since every block of the span is tested."""
    if type(block) in _MEDIA_BLOCKS:
        return True
    if type(block) is ToolResultBlock and isinstance(block.content, list):
        return any(str(part.get("type")) in _MEDIA_MARKERS for part in block.content)
    return False


def strip_media(messages: Iterable[Message]) -> list[Message]:
    """The messages fit for a summary request: images and documents (also inside tool
    results) become text markers in copies, an earlier summary the API wrote becomes its
    text; attachments are dropped, since they are restored afresh anyway. A message
    without any of these is passed as it is, not copied."""
    stripped: list[Message] = []
    for message in messages:
        if message.kind == "attachment":
            continue
        if any(map(_has_media, message.content)):
            content = [_strip_block(block) for block in message.content]
            message = message.model_copy(update={"content": content})
        stripped.append(message)
    return stripped


class ExtractiveSummarizer:
    """Builds the nine summary sections from the conversation's structure, offline.

    Size rule: the summary stays within min(`max_tokens` given here, request.max_tokens)
    tokens as `count_text` counts them. The user-messages section gets whatever the other
    sections leave, so it is cut last; when that room cannot hold every user message's
    first PROMPT_PREFIX_CHARS characters, the summary grows as far as they need when up
    to PROMPTS_MAX_TOKENS (still within request.max_tokens) is enough.
    """

    name = "extractive"

    def __init__(
        self, count_text: CountText | None = None, max_tokens: int = EXTRACTIVE_MAX_TOKENS
    ) -> None:
        self.count_text: CountText = count_text or approx_tokens
        self.max_tokens = max_tokens

    def limit(self, request: SummaryRequest) -> int:
        if request.max_tokens > 0:
            return min(self.max_tokens, request.max_tokens)
        return self.max_tokens

    def grown_limit(self, request: SummaryRequest) -> int:
        """The bound the summary may grow to for its user messages."""
        grown = max(self.max_tokens, PROMPTS_MAX_TOKENS, request.max_tokens)
        return min(grown, request.max_tokens) if request.max_tokens > 0 else grown

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        titles = section_titles(check_direction(request.direction))
        limit = self.limit(request)
        report = progress or _no_progress
        report("Reading the conversation", 0.0)
        # The input is prepared already (strip_media); attachments still in it name files.
        facts = extractive.Facts.gather(request.messages, request.facts)
        await asyncio.sleep(0)
        sections: dict[int, str] = {}
        count = remembered(self.count_text)
        builders = extractive.section_builders(facts, limit, count)
        for step, (number, build) in enumerate(builders, start=1):
            sections[number] = build()
            report(f"Summarizing: {titles[number - 1].lower()}", step / (len(builders) + 1))
            await asyncio.sleep(0)  # lets a cancelled compaction stop between sections
        body = self._assemble(titles, sections, facts, (limit, self.grown_limit(request)), count)
        report("Summary ready", 1.0)
        return body

    def _assemble(
        self,
        titles: Sequence[str],
        sections: dict[int, str],
        facts: extractive.Facts,
        limits: tuple[int, int],
        count: CountText,
    ) -> str:
        def render(section: str) -> str:
            filled = {**sections, 6: section}
            return "\n\n".join(
                f"## {number}. {title}\n{filled[number]}"
                for number, title in enumerate(titles, start=1)
            )

        limit, grown = limits
        drafted = counted_once(count)  # each draft of the whole is counted once
        fixed = drafted(render("")) + 4
        budget = limit - fixed
        if grown > limit and facts.prompts:
            need = visible_need(facts.prompts, PROMPT_PREFIX_CHARS, count, grown - fixed)
            if budget < need <= grown - fixed:  # growing keeps them all visible
                budget, limit = need, need + fixed
        for _ in range(8):
            text = render(prompts_section(facts.prompts, budget, count, PROMPT_PREFIX_CHARS))
            over = drafted(text) - limit
            if over <= 0:
                return text
            budget -= over + 4
        return extractive.hard_cut(render(prompts_section([], 0, count)), limit, count)


def _no_progress(message: str, fraction: float | None) -> None:
    del message, fraction
