"""The compaction pipeline: plan, summarize, check, then commit one boundary atomically."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from baton.core.boundary import Boundary
from baton.core.budget import compute_usage
from baton.core.compaction.ledger import retention
from baton.core.compaction.plan import Plan, plan_compaction
from baton.core.compaction.prompts import (
    merge_instructions,
    project_instructions,
    summary_message_text,
)
from baton.core.compaction.restore import Restored, restore_files
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.span_facts import SpanFacts
from baton.core.compaction.summarizers import Progress, Summarizer, SummaryRequest, strip_media
from baton.core.editor_files import EditorFiles
from baton.core.errors import BatonError, CompactionInProgress, SessionLocked, SummarizerFailed
from baton.core.messages import Message, TextBlock, invariant_violations
from baton.core.session import Session
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.tokens import Estimator

log = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 20_000
SUMMARY_START, SUMMARY_SHARE = 0.05, 0.75  # of the progress bar
KEEP_WINDOW_SHARE = 4  # the keep window is at most 1/4 of the auto-compact threshold
# Below this many tokens a compaction may leave the context larger (see _check_smaller).
MIN_CHECKED_TOKENS = 10_000


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


async def compact(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult:
    """Compact the session's view; on any failure before the commit nothing changes.

    Only one compaction runs per session at a time; messages appended while it runs
    follow the new view once it commits.
    """
    if session.compacting:
        raise CompactionInProgress(f"session {session.session_id} is already being compacted")
    if session.read_only:
        raise SessionLocked(
            f"session {session.session_id} is open for writing in another Baton process"
        )
    session.compacting = True
    try:
        return await _compact(session, request, ctx)
    finally:
        session.compacting = False


def uncompact(session: Session, boundary_id: str | None = None) -> Boundary:
    """Undo one compaction (default: the latest), keeping every turn made after it."""
    if session.compacting:
        raise CompactionInProgress(f"session {session.session_id} is being compacted")
    return session.uncompact(boundary_id)


def _report(ctx: CompactContext, text: str, fraction: float | None) -> None:
    """Progress is for show: a callback that fails must not fail (or, after the commit,
    seem to fail) the compaction."""
    if ctx.progress is None:
        return
    try:
        ctx.progress(text, fraction)
    except Exception as exc:
        log.debug("progress callback failed: %s", type(exc).__name__)


def _count(n: int, noun: str) -> str:
    """`3,723 messages`, `1 file`: how progress messages count."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _summary_progress(ctx: CompactContext) -> Progress | None:
    """The summarizer's own steps, mapped into the part of the pipeline it takes."""
    if ctx.progress is None:
        return None

    def inner(text: str, fraction: float | None) -> None:
        scaled = None if fraction is None else SUMMARY_START + SUMMARY_SHARE * fraction
        _report(ctx, text, scaled)

    return inner


async def _compact(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult:
    _report(ctx, "Planning the compaction", 0.0)
    snapshot = list(session.view)
    view = session.view_messages()
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
    kept = [by_id[mid] for mid in plan.kept]
    if request.dry_run:
        return CompactResult(
            boundary_id="",
            direction=plan.direction,
            summary=None,
            summarized_message_ids=plan.summarize,
            kept_message_ids=plan.kept,
            pre_tokens=usage.used_tokens,
            post_tokens=_estimate(session, ctx, kept),  # the summary is not written yet
            trigger=request.trigger,
            summarizer=ctx.summarizer.name,
            adjusted_pivot=plan.adjusted_pivot,
            dry_run=True,
        )

    _report(ctx, f"Summarizing {_count(len(summarized), 'message')}", SUMMARY_START)
    instructions = merge_instructions(
        request.instructions,
        ctx.settings.compact_instructions,
        project_instructions(ctx.workspace_folders),
    )
    transcript_path = str(session.transcript.path)
    # One extraction serves the summarizer (its input has no attachments) and the check.
    facts = SpanFacts.extract(summarized)
    summary_request = SummaryRequest(
        direction=plan.direction,
        messages=strip_media(summarized),
        context_before=strip_media([by_id[mid] for mid in plan.keep_before]),
        instructions=instructions,
        trigger=request.trigger,
        transcript_path=transcript_path,
        max_tokens=SUMMARY_MAX_TOKENS,
        facts=facts.without_attachments(),
    )
    body = await _summarize(ctx.summarizer, summary_request, _summary_progress(ctx))

    _report(ctx, "Checking what the summary kept", 0.8)
    kept_figures, ledger_text = retention(
        summarized,
        body,
        kept,
        count_text=ctx.estimator.count_text,
        transcript_path=transcript_path,
        facts=facts,
    )
    if ledger_text:
        body = f"{body.rstrip()}\n\n{ledger_text}"
    summary = Message(
        role="user",
        kind="summary",
        content=[
            TextBlock(
                text=summary_message_text(
                    body,
                    transcript_path=transcript_path,
                    auto=request.trigger == "auto",
                    direction=plan.direction,
                )
            )
        ],
    )
    restored = _restore(ctx, kept)
    _report(ctx, f"Restoring {_count(len(restored.files), 'file')}", 0.85)
    attachments = [message for message, _ in restored.files]
    new_view = layout_view(plan, summary, attachments, by_id)

    _report(ctx, "Checking the new conversation", 0.9)
    _check(session, snapshot, new_view)
    restored_ids = {m.id for m in attachments}
    before = min(usage.used_tokens, _estimate(session, ctx, view))
    after = _estimate(session, ctx, [m for m in new_view if m.id not in restored_ids])
    _check_smaller(ctx, before, after)
    boundary = Boundary(
        trigger=request.trigger,
        direction=plan.direction,
        summarizer=ctx.summarizer.name,
        pre_tokens=usage.used_tokens,
        post_tokens=_estimate(session, ctx, new_view),
        summary_id=summary.id,
        new_messages=[summary, *attachments],
        stands_for={summary.id: list(plan.span), **{m.id: [] for m in attachments}},
        summarized_ids=list(plan.summarize),
        kept_ids=plan.kept,
        view_before=snapshot,
        view_after=[m.id for m in new_view],
        restored_files=[file for _, file in restored.files],
        skipped_files=restored.skipped,
        retention=kept_figures,
        adjusted_pivot=plan.adjusted_pivot,
        instructions=instructions,
    )
    _report(ctx, "Committing", 0.95)
    session.commit_boundary(boundary)
    _report(ctx, "Compacted", 1.0)
    return CompactResult.from_boundary(boundary, body)


def bounded_keep_window(window: KeepWindowSettings, threshold: int) -> KeepWindowSettings:
    """The keep window, never more than a quarter of the auto-compact threshold: on a small
    context window the default 10,000-40,000 tokens kept verbatim would leave the view over
    the threshold, and auto-compact would run again on every append."""
    cap = max(0, threshold // KEEP_WINDOW_SHARE)
    if window.max_tokens <= cap:
        return window
    return window.model_copy(update={"max_tokens": cap, "min_tokens": min(window.min_tokens, cap)})


async def _summarize(
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
    return body


def _restore(ctx: CompactContext, kept: list[Message]) -> Restored:
    if ctx.editor_files is None:
        return Restored()
    return restore_files(
        ctx.editor_files,
        kept=kept,
        settings=ctx.settings.restore,
        workspace_folders=ctx.workspace_folders,
        count_text=ctx.estimator.count_text,
    )


def layout_view(
    plan: Plan, summary: Message, attachments: list[Message], by_id: dict[str, Message]
) -> list[Message]:
    """The new view (BEHAVIOR 4.6): `all`/`up_to`: summary, kept, attachments; `from`: kept
    prefix, summary, attachments; `range`: before, summary, attachments, after. Pinned
    messages of the span follow the summary."""
    head = [by_id[mid] for mid in plan.keep_before]
    pinned = [by_id[mid] for mid in plan.pinned]
    tail = [by_id[mid] for mid in plan.keep_after]
    if plan.direction in ("all", "up_to") and not _waits_for_results(tail):
        return [summary, *pinned, *tail, *attachments]
    # A trailing tool call still waiting for its result must stay last, so attachments
    # (user messages) go before the kept messages there.
    return [*head, summary, *pinned, *attachments, *tail]


def _waits_for_results(messages: Sequence[Message]) -> bool:
    """True when the messages end in an assistant turn with tool calls not answered yet."""
    answered = {r.tool_use_id for m in messages for r in m.tool_results()}
    for message in reversed(messages):
        if message.role == "user" and not message.is_tool_result_only:
            return False
        if any(use.id not in answered for use in message.tool_uses()):
            return True
    return False


def _check(session: Session, snapshot: list[str], new_view: list[Message]) -> None:
    """Refuse to commit a view that breaks the API's rules in a new way, or one planned from
    a view that has since changed other than by appends."""
    current = session.view_messages()
    if session.view[: len(snapshot)] != snapshot:
        raise CompactionInProgress(
            "the conversation changed while it was being compacted; nothing was changed"
        )
    late = current[len(snapshot) :]
    before = set(invariant_violations(current))
    problems = [p for p in invariant_violations([*new_view, *late]) if p not in before]
    if problems:
        raise BatonError("compaction would break the conversation: " + "; ".join(problems[:3]))


def _check_smaller(ctx: CompactContext, before: int, after: int) -> None:
    """Refuse a compaction whose summary would not make the context smaller: it would
    trade messages for a longer text about them, and auto-compact would try again at once.

    `before` is the smaller of the usage reported as the compaction's start (API usage when
    there is one) and the old view's estimate; `after` is the new view without the editor
    files restored into it (those are a separate addition with their own bound, BEHAVIOR 6).
    Contexts under MIN_CHECKED_TOKENS are exempt: nothing there needs reclaiming, a summary
    has a fixed size of its own (headings, the wrapper) that a short conversation may not
    reach, and its growth is bounded (the summarizer's bound plus the ledger's)."""
    if before >= MIN_CHECKED_TOKENS and after >= before:
        raise SummarizerFailed(
            f"the {ctx.summarizer.name} summary would not make the conversation smaller "
            f"({before:,} tokens before, {after:,} after); nothing was changed"
        )


def _estimate(session: Session, ctx: CompactContext, messages: Sequence[Message]) -> int:
    """Estimated context tokens of a view: right after a compaction there is no API usage
    that still describes it."""
    raw = ctx.estimator.count_text(session.system_prompt or "") + ctx.tools_tokens
    raw += sum(m.tokens or ctx.estimator.count_message(m) for m in messages)
    return ctx.estimator.calibrated(raw)
