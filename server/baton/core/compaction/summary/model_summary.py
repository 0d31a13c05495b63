"""The `anthropic` summarizer: one streamed Messages API call, retried shorter when too long."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from baton.core.compaction.prompts import (
    SUMMARY_REMINDER,
    SUMMARY_SYSTEM,
    summary_prompt,
    summary_section,
)
from baton.core.compaction.retention.standing import joined
from baton.core.compaction.rounds import truncate_head
from baton.core.compaction.summary import request_fit, request_usage
from baton.core.compaction.summary.summarizers import Progress, SummaryRequest, strip_media
from baton.core.conversation.messages import (
    CompactionBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.errors import PromptTooLong, SummarizerFailed
from baton.core.model_api.client import ModelClient, to_api_messages
from baton.core.models.model_window import model_limits, model_window
from baton.core.models.windows import lookup_model

log = logging.getLogger(__name__)

MAX_OUTPUT = 20_000
MAX_RETRIES = 3  # shorter retries after "prompt is too long"
PROGRESS_EVERY = 400  # characters between two progress reports while the summary streams
SPAN_MARKER = "[End of the earlier context. The messages from here on are the part to summarize.]"
OMITTED_MARKER = "[earlier conversation omitted]"

Count = Callable[[Message], int]


def approx_count(message: Message) -> int:
    """The message's recorded token count, or a rough one (a token per 4 JSON characters)."""
    return message.tokens or max(1, len(message.model_dump_json()) // 4)


class AnthropicSummarizer:
    """Summarizes through a `ModelClient`; no tools are offered to the model."""

    name = "anthropic"

    def __init__(
        self,
        client: ModelClient,
        model: str,
        max_output: int = MAX_OUTPUT,
        *,
        count: Count | None = None,
        max_retries: int = MAX_RETRIES,
    ) -> None:
        self.client = client
        self.model = model
        self.max_output = max_output
        self.count = count or approx_count
        self.max_retries = max_retries

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        limit = self.max_output
        if request.max_tokens > 0:
            limit = min(limit, request.max_tokens)
        standing = request.facts.instructions if request.facts is not None else []
        prompt = summary_prompt(request.direction, joined(request.instructions, standing))
        max_tokens = min(limit, await self._model_output_cap())
        for attempt in range(2):  # an answer without a <summary> section gets one reminder
            text = await ask_model(
                self.client,
                model=self.model,
                system=SUMMARY_SYSTEM,
                context=request.context_before,
                messages=request.messages,
                prompt=prompt if attempt == 0 else f"{prompt}\n\n{SUMMARY_REMINDER}",
                max_tokens=max_tokens,
                count=self.count,
                progress=progress,
                max_retries=self.max_retries,
            )
            summary = summary_section(text)
            if summary:
                return summary
            log.info("the model's answer held no <summary> section (attempt %d)", attempt + 1)
            if progress is not None and attempt == 0:
                progress("The answer held no summary; asking once more", None)
        raise SummarizerFailed(
            "the model's answer held no <summary> section, also after a reminder"
        )

    async def _model_output_cap(self) -> int:
        """The most the model may write (older models allow less than a summary's cap)."""
        found = await model_limits(self.client, self.model)
        if found and found.get("max_tokens"):
            return int(found["max_tokens"])
        spec, _ = lookup_model(self.model)
        return spec.max_output if spec is not None else self.max_output


async def ask_model(
    client: ModelClient,
    *,
    model: str,
    system: str,
    context: Sequence[Message],
    messages: Sequence[Message],
    prompt: str,
    max_tokens: int,
    count: Count = approx_count,
    progress: Progress | None = None,
    max_retries: int = MAX_RETRIES,
) -> str:
    """The model's text answer to `prompt` about `messages` (after `context`, if any).

    The request is first fitted to the model's window (`request_fit`). One streamed request
    per attempt. When the API says the prompt is too long, the oldest API rounds go (the
    context first) until the reported overflow is covered, or, with one round left, its
    longest message is clipped, at most `max_retries` times; then PromptTooLong.
    """
    before = as_text_messages(context)
    body = span = as_text_messages(messages)
    report = progress or _silent
    window = await model_window(client, model)
    if window is not None:
        fixed = (len(system) + len(prompt) + len(SPAN_MARKER)) // 3
        fitted = request_fit.fit(before, body, request_fit.room(window, max_tokens, fixed), count)
        before, body = fitted.before, fitted.body
        told = fitted.told()
        if told is not None:
            log.info("%s (a %d-token window)", told, window)
            report(told, None)
    for attempt in range(max_retries + 1):
        payload = _payload(before, body, prompt)
        try:
            text = await _stream_text(client, model, system, payload, max_tokens, report)
        except PromptTooLong as exc:
            if attempt == max_retries:
                raise PromptTooLong(
                    f"the conversation is still too long to summarize after {max_retries} "
                    "shorter retries",
                    actual=exc.actual,
                    limit=exc.limit,
                ) from None
            overflow = exc.actual - exc.limit if exc.actual and exc.limit else None
            shorter = _shorten(before, body, overflow, count)
            if shorter is None:
                raise PromptTooLong(
                    "the conversation is too long to summarize and cannot be shortened further",
                    actual=exc.actual,
                    limit=exc.limit,
                ) from None
            before, body = shorter
            log.info("summary prompt too long (overflow %s); retrying shorter", overflow)
            report(
                f"The conversation is too long for one request; retrying without its oldest "
                f"part ({attempt + 1}/{max_retries})",
                None,
            )
        else:
            request_usage.record_shortened(*request_fit.shortened(span, body))
            return text
    raise AssertionError("unreachable")  # the loop returns or raises


async def _stream_text(
    client: ModelClient,
    model: str,
    system: str,
    payload: list[dict[str, Any]],
    max_tokens: int,
    report: Progress,
) -> str:
    received = 0
    reported = 0

    def on_text(text: str) -> None:
        nonlocal received, reported
        received += len(text)
        if received - reported >= PROGRESS_EVERY:
            reported = received
            report(f"Writing the summary (about {received // 4:,} tokens so far)", None)

    report("Waiting for the model", None)
    reply = await client.stream_reply(
        model=model,
        system=system,
        messages=payload,
        tools=None,
        max_tokens=max_tokens,
        on_text=on_text,
        on_wait=lambda text: report(text, None),  # a wait to ask the API again, told
    )
    request_usage.record(reply.usage)  # what the API billed, for the result's cost figures
    text = "".join(b.text for b in reply.content if isinstance(b, TextBlock))
    if reply.stop_reason == "max_tokens":
        log.warning("the summary hit its %d-token output cap", max_tokens)
    return text


def _payload(before: list[Message], body: list[Message], prompt: str) -> list[dict[str, Any]]:
    sequence: list[Message] = []
    if before:
        sequence += [*before, text_message("user", SPAN_MARKER)]
    sequence += body
    sequence.append(text_message("user", prompt))
    if sequence[0].role != "user":
        sequence.insert(0, text_message("user", OMITTED_MARKER))
    return to_api_messages(sequence, keep_thinking=False)


def _shorten(
    before: list[Message], body: list[Message], overflow: int | None, count: Count
) -> tuple[list[Message], list[Message]] | None:
    """Drop the context first (it is only there to read), then the body's oldest rounds;
    with one round left, clip its longest message."""
    if before:
        freed = sum(count(m) for m in before)
        if overflow is None or freed >= overflow:
            return [], body
        overflow -= freed
    shorter = truncate_head(body, overflow, count)
    if shorter is None:
        shorter = request_fit.clip_longest(body, count)
    return None if shorter is None else ([], shorter)


# ---- the request's messages as plain text --------------------------------------------------
# A request with tool_use / tool_result blocks must define tools and answer every call in
# the next turn; a summary request offers no tools and may end mid-call. As text, the
# model still reads every call and result, and no pairing rule applies.


def as_text_messages(messages: Sequence[Message]) -> list[Message]:
    """Media-stripped copies whose blocks are all text; thinking is left out."""
    out: list[Message] = []
    for message in strip_media(messages):
        parts = [p for p in (_block_text(b) for b in message.content) if p]
        if parts:
            blocks: list[ContentBlock] = [TextBlock(text="\n".join(parts))]
            out.append(message.model_copy(update={"content": blocks}))
    return out


def _block_text(block: ContentBlock) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        arguments = json.dumps(block.input, ensure_ascii=False, default=str)
        return f"[tool call {block.name} ({block.id}): {arguments}]"
    if isinstance(block, ToolResultBlock):
        label = "tool error" if block.is_error else "tool result"
        return f"[{label} for {block.tool_use_id}]\n{_result_text(block.content)}"
    if isinstance(block, ImageBlock):
        return "[image]"
    if isinstance(block, DocumentBlock):
        return "[document]"
    if isinstance(block, CompactionBlock):  # an earlier summary the API wrote, read as text
        return f"[summary of the earlier conversation]\n{block.content or ''}"
    return ""  # thinking and redacted thinking: the model's own scratch work


def _result_text(content: str | list[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            pieces.append(str(part.get("text", "")))
        else:
            pieces.append(f"[{kind}]")
    return "\n".join(pieces)


def _silent(message: str, fraction: float | None) -> None:
    del message, fraction
