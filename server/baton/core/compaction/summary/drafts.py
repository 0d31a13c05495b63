"""Who writes a compaction's summary and the messages it becomes: the API's own block
(`server`) or Baton's text, with the ledger and the transcript note where each must go."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baton.core.compaction.prompts import summary_message_text
from baton.core.compaction.retention.standing import joined, with_standing
from baton.core.compaction.summary import request_fit
from baton.core.compaction.summary.api_compaction import (
    DIRECTIONS,
    ServerFallback,
    ServerSummarizer,
    note_message,
    server_request,
)
from baton.core.compaction.summary.request_usage import summary_usage
from baton.core.compaction.summary.summarizers import Progress, Summarizer, SummaryRequest
from baton.core.conversation.messages import ApiUsage, CompactionBlock, Message, TextBlock
from baton.core.conversation.session import Session
from baton.core.errors import BatonError, SummarizerFailed

if TYPE_CHECKING:
    from baton.core.compaction.engine import CompactContext
    from baton.core.compaction.prepared_summary import PreparedSummary

log = logging.getLogger(__name__)


@dataclass
class Written:
    """A summary as written: `body` (the text, or the block's content), `block` when the
    API wrote it, who wrote it, and `warnings` for the client (a fallback's reason)."""

    body: str
    summarizer: str
    block: CompactionBlock | None = None
    warnings: list[str] = field(default_factory=list)
    usage: ApiUsage | None = None  # the summary requests' usage as the API reported it


async def write_summary(
    session: Session,
    ctx: CompactContext,
    direction: str,
    request: SummaryRequest,
    summarized: list[Message],
    progress: Progress | None,
) -> Written:
    """The API's own summary when the summarizer is `server` and it can be had, else
    Baton's (a fallback's reason becomes a warning unless `auto` chose quietly)."""
    summarizer: Summarizer = ctx.summarizer
    warnings: list[str] = []
    if isinstance(summarizer, ServerSummarizer):
        try:
            block = await summarizer.compact_block(
                direction,
                server_request(
                    model=session.model or ctx.settings.model,
                    system=session.system_prompt,
                    tools=ctx.tools,
                    summarized=summarized,
                    instructions=joined(request.instructions, _standing(request)),
                ),
                progress,
                span_tokens=sum(m.tokens for m in summarized),
            )
        except ServerFallback as exc:
            log.info("server compaction fell back: %s", exc.reason)
            if not exc.quiet:
                warnings.append(exc.reason)
            summarizer = summarizer.fallback
        else:
            return Written(block.content or "", "server", block)
    with summary_usage() as tally:
        body = await summarize_checked(summarizer, request, progress)
    unread = request_fit.warning(tally.left_out, tally.clipped)
    if unread is not None:
        warnings.append(unread)
    return Written(body, summarizer.name, warnings=warnings, usage=tally.total)


def planned_summarizer(summarizer: Summarizer, direction: str) -> str:
    """The summarizer a dry run names: `server` cannot write `from` / `range` summaries."""
    if isinstance(summarizer, ServerSummarizer) and direction not in DIRECTIONS:
        return summarizer.fallback.name
    return summarizer.name


async def summarize_checked(
    summarizer: Summarizer, request: SummaryRequest, progress: Progress | None
) -> str:
    try:
        body = await summarizer.summarize(request, progress)
    except BatonError:
        raise
    except Exception as exc:  # any summarizer failure: report it, change nothing
        log.warning("summarizer %s failed: %s", summarizer.name, type(exc).__name__)
        raise SummarizerFailed(f"the {summarizer.name} summarizer failed: {exc}") from exc
    if not body or not body.strip():
        raise SummarizerFailed(f"the {summarizer.name} summarizer returned an empty summary")
    # Every summarizer's text quotes the standing instructions at the head of section 1.
    return with_standing(body, _standing(request))


def _standing(request: SummaryRequest) -> list[str]:
    return request.facts.instructions if request.facts is not None else []


def summary_messages(
    prepared: PreparedSummary, ledger_text: str | None, transcript_path: str
) -> tuple[Message, list[Message], str]:
    """The summary message, the notes that follow the kept messages, and the body the
    result reports. Baton's text carries the ledger and the transcript note itself; the
    API's block is signed and must stand alone, with nothing between it and the kept turns,
    so they go into a note after the kept messages."""
    auto = prepared.request.trigger == "auto"
    if prepared.block is not None:
        summary = Message(role="assistant", kind="summary", content=[prepared.block])
        return summary, [note_message(transcript_path, auto, ledger_text)], prepared.body
    body = prepared.body
    if ledger_text:
        body = f"{body.rstrip()}\n\n{ledger_text}"
    text = summary_message_text(
        body, transcript_path=transcript_path, auto=auto, direction=prepared.plan.direction
    )
    return Message(role="user", kind="summary", content=[TextBlock(text=text)]), [], body
