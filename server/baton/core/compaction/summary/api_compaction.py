"""The `server` summarizer: the API's own compaction (compaction on demand), its block and errors.

One request with the top-level `compaction` parameter (beta `compact-2026-09-04`) returns a
single signed `compaction` block that stands for every message the request carried. Baton
stores it as the summary message, an assistant message holding only that block, exactly as
returned, and sends it first in every later request (with the beta header). Because the
block must come first it can only stand for the start of the view: `all` and `up_to`.

What cannot work ends in Baton's own summary (`ServerFallback`, whose reason the client
sees in `CompactResult.warnings`) or in a clean error; nothing is committed either way.
The API calls themselves are in `server_api.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from baton.core.compaction.summary.summarizers import Progress, Summarizer, SummaryRequest
from baton.core.conversation.messages import CompactionBlock, Message, text_message
from baton.core.model_api.api_messages import to_api_messages
from baton.core.model_api.compaction_request import BETA as BETA
from baton.core.model_api.compaction_request import ServerFallback as ServerFallback
from baton.core.model_api.compaction_request import ServerRequest
from baton.core.models.model_window import model_limits, model_window

log = logging.getLogger(__name__)

DIRECTIONS = ("all", "up_to")  # the block goes first, so it can only stand for the start
MAX_INSTRUCTIONS = 16_384  # characters the API accepts in `compaction.instructions`
PROMPT = (
    "Summarize this conversation so that the work can continue from the summary alone: the "
    "user's requests and intent, the files and code that matter, errors and how they were "
    "fixed, what is done, what is pending and the current work. Do not call tools; answer "
    "with the summary text only.\n\nAlso follow these instructions:\n"
)


class CompactionClient(Protocol):
    async def compact(
        self, request: ServerRequest, on_wait: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """The compaction response as the API sent it (a Messages API message); each wait
        before the request is asked again told to `on_wait` first."""
        ...

    async def compaction_supported(self, model: str) -> bool | None:
        """The Models API's `capabilities.compaction` for `model` (None: it did not say)."""
        ...

    async def model_limits(self, model: str) -> dict[str, int] | None: ...


class ServerSummarizer:
    """Asks the API to compact; `summarize` (the text summarizer protocol) and every
    fallback use `fallback`. `explicit` is True when the settings name `server` (then a
    fallback is always reported), False when `auto` picked it."""

    name = "server"

    def __init__(self, client: CompactionClient, fallback: Summarizer, *, explicit: bool) -> None:
        self.client = client
        self.fallback = fallback
        self.explicit = explicit

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        return await self.fallback.summarize(request, progress)

    async def compact_block(
        self,
        direction: str,
        request: ServerRequest,
        progress: Progress | None = None,
        *,
        span_tokens: int = 0,
    ) -> CompactionBlock:
        """The API's block for `request` (whose messages count `span_tokens`), or
        ServerFallback / a BatonError."""
        if direction not in DIRECTIONS:
            raise ServerFallback(
                f"the API's compaction can only summarize the start of a conversation, so "
                f"this `{direction}` compaction used Baton's own summary "
                f"({self.fallback.name})",
                quiet=not self.explicit,
            )
        supported = await self.client.compaction_supported(request.model)
        if supported is False or (supported is None and not self.explicit):
            raise ServerFallback(
                f"the Models API does not list compaction for {request.model}, so Baton's "
                f"own summary ({self.fallback.name}) was used",
                quiet=not self.explicit,
            )
        window = await model_window(self.client, request.model)
        if window is not None and span_tokens > window:  # it reads them whole: refused
            raise ServerFallback(
                f"the API's compaction reads the span whole, and its {span_tokens:,} tokens "
                f"are more than {request.model} reads ({window:,}), so Baton's own summary "
                f"({self.fallback.name}) was used",
                quiet=not self.explicit,
            )
        if progress is not None:
            progress("Waiting for the API's summary", None)
        limits = await model_limits(self.client, request.model)
        if limits and limits.get("max_tokens"):
            request = replace(request, max_tokens=min(request.max_tokens, limits["max_tokens"]))
        told = (lambda text: progress(text, None)) if progress is not None else None
        response = await self.client.compact(request, told)  # a wait said as it begins
        return response_block(response, self.fallback.name)


def server_request(
    *,
    model: str,
    system: str | None,
    tools: list[dict[str, Any]] | None,
    summarized: list[Message],
    instructions: str | None,
) -> ServerRequest:
    """The compaction request for the summarized messages as they stand (thinking and media
    included: the API reads them); restored-file attachments are left out, as they are
    restored afresh."""
    messages = to_api_messages([m for m in summarized if m.kind != "attachment"])
    return ServerRequest(
        model=model,
        messages=messages,
        system=system or None,
        tools=tools or None,
        instructions=server_instructions(instructions),
    )


def response_block(response: dict[str, Any], fallback: str) -> CompactionBlock:
    """The block of a 200 answer; a missing summary (any other `stop_reason`, empty
    content) is a fallback, as the documentation says to check `stop_reason` first."""
    stop = response.get("stop_reason")
    blocks = [b for b in response.get("content") or [] if isinstance(b, dict)]
    found = [b for b in blocks if b.get("type") == "compaction"]
    if stop != "compaction" or len(found) != 1 or not str(found[0].get("content") or "").strip():
        raise ServerFallback(
            f"the API's compaction returned no summary (stop reason {stop!r}), so Baton's "
            f"own summary ({fallback}) was used"
        )
    return CompactionBlock.model_validate(found[0])


def server_instructions(instructions: str | None) -> str | None:
    """`instructions` replace the API's own summarization prompt, so custom instructions go
    in with a full prompt around them; without any the API's prompt is used."""
    if not instructions or not instructions.strip():
        return None
    return (PROMPT + instructions.strip())[:MAX_INSTRUCTIONS]


# ---- the summary message and the note after the kept turns --------------------------------


def note_message(transcript_path: str | None, auto: bool, ledger: str | None) -> Message:
    """What follows the kept turns after the API's summary: the transcript path, the fact
    ledger, and for an auto compaction the line that says to carry on."""
    parts = ["The summary at the start of this conversation was written by the API."]
    if transcript_path:
        parts.append(
            "The full, unsummarized history is in the transcript file "
            f"{transcript_path} (one JSON record per line). Read it when you need an exact "
            "detail the summary leaves out."
        )
    if ledger:
        parts.append(ledger)
    if auto:
        parts.append(
            "Carry on with the last task you were working on, right where it stopped. Do not "
            "recap the summary and do not ask the user anything further before continuing."
        )
    return text_message("user", "\n\n".join(parts), kind="attachment")
