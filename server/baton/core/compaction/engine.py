"""The compaction pipeline: plan and summarize (here), then check and commit one boundary
atomically (`commit.py`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from baton.core.compaction.commit import (
    commit_summary,
    count_noun,
    layout_view,
    report,
)
from baton.core.compaction.cuts import counts_shared
from baton.core.compaction.figures import MIN_CHECKED_TOKENS, after_compaction
from baton.core.compaction.hook_runs import run_compaction
from baton.core.compaction.hooks import Hooks
from baton.core.compaction.plan import plan_compaction
from baton.core.compaction.prepared_summary import PreparedSummary
from baton.core.compaction.prompts import merge_instructions, project_instructions
from baton.core.compaction.represented import SUMMARY_MAX_TOKENS, span_summary_bound
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.summary.drafts import planned_summarizer, write_summary
from baton.core.compaction.summary.summarizers import (
    ExtractiveSummarizer,
    Progress,
    Summarizer,
    SummaryRequest,
    strip_media,
)
from baton.core.compaction.while_compacting import pin, rewind, uncompact, undo_target
from baton.core.conversation.files import path_text
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.errors import BatonError
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton.core.workspace.editor_files import EditorFiles

__all__ = [
    "MIN_CHECKED_TOKENS",
    "SUMMARY_MAX_TOKENS",
    "CompactContext",
    "PreparedSummary",
    "commit_summary",
    "compact",
    "compact_prepared",
    "layout_view",
    "pin",
    "rewind",
    "run_compaction",
    "summarize",
    "uncompact",
    "undo_target",
]

log = logging.getLogger(__name__)

SUMMARY_START, SUMMARY_SHARE = 0.05, 0.75  # of the progress bar
KEEP_WINDOW_SHARE = 4  # the keep window is at most 1/4 of the auto-compact threshold


@dataclass
class CompactContext:
    """Everything a compaction needs besides the session and the request."""

    settings: Settings
    estimator: Estimator
    summarizer: Summarizer
    editor_files: EditorFiles | None = None
    workspace_folders: list[Path] = field(default_factory=list)
    progress: Progress | None = None
    tools_tokens: int = 0  # tool definitions sent with every request count too
    tools: list[dict[str, Any]] | None = None  # the tools of the last send (server summaries)
    hooks: Hooks | None = None  # the user's PreCompact / PostCompact commands (`hooks.py`)
    # the file the summary names as holding the full history, when it is not the session's
    # transcript (the command line compacts a scratch copy of the file it was given)
    history_path: Path | None = None
    # told as soon as the compaction commits, before its PostCompact hooks run (`run_compaction`):
    # the service announces the change there
    committed: Callable[[CompactResult], None] | None = None
    # awaited once the compaction holds the session, before its hooks and its plan: the
    # undos asked before it (checked in the session's lane) commit first
    settled: Callable[[], Awaitable[None]] | None = None

    def history(self, session: Session) -> str:
        """The file where the full history of `session` can be read, as text a summary
        can hold (a byte of its name that is not UTF-8 shows as \\xNN)."""
        return path_text(self.history_path or session.transcript.path)


async def compact(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult:
    """Compact the session's view; on any failure before the commit nothing changes.

    Only one compaction runs per session at a time; messages appended while it runs
    follow the new view once it commits.
    """
    return await run_compaction(session, request, ctx, lambda asked: _compact(session, asked, ctx))


def _summary_progress(ctx: CompactContext) -> Progress | None:
    """The summarizer's own steps, mapped into the part of the pipeline it takes."""
    if ctx.progress is None:
        return None

    def inner(text: str, fraction: float | None) -> None:
        scaled = None if fraction is None else SUMMARY_START + SUMMARY_SHARE * fraction
        report(ctx, text, scaled)

    return inner


async def _compact(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult:
    if request.dry_run and request.measure:
        return await _measured_dry_run(session, request, ctx)
    prepared = await _plan_and_summarize(session, request, ctx)
    if isinstance(prepared, CompactResult):
        return prepared  # a dry run that only plans
    return commit_summary(session, prepared, ctx)


async def _measured_dry_run(
    session: Session, request: CompactRequest, ctx: CompactContext
) -> CompactResult:
    """A dry run that writes the summary offline and lays out the view it would leave,
    restored files included, without committing: its `postTokens` is the figure the
    compaction would report. A summarizer that asks a model is not asked: the offline
    summary stands in for its size, and a warning says so."""
    named = ctx.summarizer
    planned = planned_summarizer(named, request.direction)
    offline = ctx
    warnings: list[str] = []
    if named.name != "extractive":
        offline = replace(ctx, summarizer=ExtractiveSummarizer(ctx.estimator.count_text))
        warnings.append(
            f"the context after is measured with the offline summary; the {planned} "
            "summary is written only when compacting and its size may differ"
        )
    prepared = await _plan_and_summarize(session, replace(request, dry_run=False), offline)
    assert isinstance(prepared, PreparedSummary)
    result = commit_summary(session, prepared, offline, dry_run=True)
    return result.model_copy(
        update={
            "summarizer": planned,
            "trigger": request.trigger,
            "warnings": [*warnings, *result.warnings],
        }
    )


async def summarize(
    session: Session,
    request: CompactRequest,
    ctx: CompactContext,
    view: list[Message] | None = None,
) -> PreparedSummary:
    """Plan and summarize `view` (default: the current view) without committing, and
    without holding the session's compaction flag: appends, and even other compactions,
    may happen meanwhile; `commit_summary` refuses a snapshot that has changed other than
    by appends."""
    prepared = await _plan_and_summarize(session, replace(request, dry_run=False), ctx, view)
    assert isinstance(prepared, PreparedSummary)
    return prepared


async def _plan_and_summarize(
    session: Session,
    request: CompactRequest,
    ctx: CompactContext,
    view: list[Message] | None = None,
) -> PreparedSummary | CompactResult:
    report(ctx, "Planning the compaction", 0.0)
    view = session.view_messages() if view is None else list(view)
    snapshot = [m.id for m in view]
    usage = compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
    plan = plan_compaction(
        view,
        request.direction,
        request.pivot_message_id,
        request.end_message_id,
        keep_window=bounded_keep_window(ctx.settings.keep_window, usage.auto_compact_threshold),
        count=lambda m: m.tokens or ctx.estimator.count_message(m),
    )
    by_id = {m.id: m for m in view}
    summarized = [by_id[mid] for mid in plan.summarize]
    if request.dry_run:
        kept = [by_id[mid] for mid in plan.kept]
        return CompactResult(
            boundary_id="",
            direction=plan.direction,
            summary=None,
            summarized_message_ids=plan.summarize,
            kept_message_ids=plan.kept,
            pre_tokens=usage.used_tokens,
            # the summary is not written: only what stays, and what the API saw besides it
            post_tokens=after_compaction(session, ctx, kept),
            trigger=request.trigger,
            summarizer=planned_summarizer(ctx.summarizer, plan.direction),
            adjusted_pivot=plan.adjusted_pivot,
            dry_run=True,
        )

    report(ctx, f"Summarizing {count_noun(len(summarized), 'message')}", SUMMARY_START)
    instructions = merge_instructions(
        request.instructions,
        ctx.settings.compact_instructions,
        project_instructions(ctx.workspace_folders),
    )
    # One extraction serves the summarizer (its input has no attachments) and the check;
    # made in a worker thread, as the summary the model writes waits on the server's
    # loop (a span holding one 50 MB message: 1.2-1.4 s of CPU)
    facts = await asyncio.to_thread(SpanFacts.extract, summarized)
    count_message = ctx.estimator.count_message
    summary_request = SummaryRequest(
        direction=plan.direction,
        messages=strip_media(summarized),
        context_before=strip_media([by_id[mid] for mid in plan.keep_before]),
        instructions=instructions,
        trigger=request.trigger,
        transcript_path=ctx.history(session),
        max_tokens=span_summary_bound(
            session,
            summarized,
            lambda m: m.tokens or count_message(m),
            usage.auto_compact_threshold,
        ),
        facts=facts.without_attachments(),
    )
    with counts_shared() as counts:  # the ledger counts many of the summary's prompts again
        written = await write_summary(
            session, ctx, plan.direction, summary_request, summarized, _summary_progress(ctx)
        )
    return PreparedSummary(
        request=request,
        plan=plan,
        snapshot=snapshot,
        messages=view,
        body=written.body,
        instructions=instructions,
        summarizer=written.summarizer,
        pre_tokens=usage.used_tokens,
        facts=facts,
        counts=counts,
        block=written.block,
        warnings=written.warnings,
        summary_usage=written.usage,
    )


async def compact_prepared(
    session: Session, prepared: PreparedSummary, ctx: CompactContext
) -> CompactResult:
    """Commit a summary prepared earlier (`summarize`: the summary written ahead of
    auto-compact) in a compaction's frame, as every compaction commits: one at a time, the
    PreCompact hooks first (one may block it: nothing changes), the PostCompact ones after.
    A summary that can no longer commit (the context would not get smaller), or that was
    written before a PreCompact hook added instructions, gives way to a new one, written in
    the same frame for the request as the hooks left it."""
    request = prepared.request

    async def work(asked: CompactRequest) -> CompactResult:
        if asked.instructions == request.instructions:
            try:
                return commit_summary(session, prepared, ctx)
            except BatonError as exc:
                log.info("the summary prepared earlier cannot be committed: %s", exc.message)
        else:
            log.info("a PreCompact hook added instructions: a new summary follows them")
        return await _compact(session, asked, ctx)

    return await run_compaction(session, request, ctx, work)


def bounded_keep_window(window: KeepWindowSettings, threshold: int) -> KeepWindowSettings:
    """The keep window, never more than a quarter of the auto-compact threshold: on a small
    context window the default 10,000-40,000 tokens kept verbatim would leave the view over
    the threshold, and auto-compact would run again on every append."""
    cap = max(0, threshold // KEEP_WINDOW_SHARE)
    if window.max_tokens <= cap:
        return window
    return window.model_copy(update={"max_tokens": cap, "min_tokens": min(window.min_tokens, cap)})
