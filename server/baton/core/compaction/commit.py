"""Committing a summary: the new view, the checks it must pass, the one boundary line.

A summary is written for a snapshot of the view (`engine.summarize`); committing it may
happen at once (an ordinary compaction) or later (one prepared in the background), so
the checks compare the snapshot with the session as it is at commit time: messages
appended since follow the new view, any other change refuses the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from baton.core.compaction.dropped import dropped, lines
from baton.core.compaction.figures import after_compaction, check_smaller, estimate
from baton.core.compaction.plan import Plan
from baton.core.compaction.prepared_summary import PreparedSummary, check_retention
from baton.core.compaction.result import CompactResult
from baton.core.compaction.retention.facts import attachment_path, normalize
from baton.core.compaction.retention.ledger import found_in
from baton.core.compaction.summary.drafts import summary_messages
from baton.core.compaction.working_set.held_facts import HeldFacts, read_held
from baton.core.compaction.working_set.plan_todos import with_plan_and_todos
from baton.core.compaction.working_set.restore import Restored, restore_files
from baton.core.compaction.working_set.session_files import SessionFile
from baton.core.compaction.working_set.visible import in_place_of_stale, stale_copies
from baton.core.conversation.boundary import Boundary, Retention
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, new_id
from baton.core.conversation.request_bytes import kept_media_warning
from baton.core.conversation.session import Session
from baton.core.errors import BatonError, CompactionInProgress
from baton.core.usage.session_usage import compute_usage

if TYPE_CHECKING:
    from baton.core.compaction.engine import CompactContext

log = logging.getLogger(__name__)


def _retained(
    prepared: PreparedSummary, ctx: CompactContext, transcript_path: str, restored: list[str]
) -> tuple[Retention, str | None]:
    """The retention check made ahead, or made now when a file restored now is a path of
    the span: it stays in view, so no ledger carries it and it is not reported gone. A path
    of the span is one the restored paths hold, as the check finds it (a relative path a
    tool call read is found in the restored file's absolute one)."""
    span = prepared.facts.unique_paths.values() if prepared.facts is not None else None
    again = normalize("\n".join(restored))
    if prepared.retained is None or span is None or any(found_in(again, key) for key in span):
        prepared.retained = check_retention(prepared, ctx, transcript_path, restored)
    return prepared.retained


def commit_summary(
    session: Session, prepared: PreparedSummary, ctx: CompactContext, *, dry_run: bool = False
) -> CompactResult:
    """Check a prepared summary against the session as it is now and commit it as one
    boundary; on any failure nothing changes. Synchronous: nothing can change the session
    between the checks and the commit. With `dry_run`, everything but the commit: the
    result says what the compaction would leave (a summary that would not make the
    context smaller is a warning then, not an error)."""
    if not dry_run:
        session.refuse_if_read_only()
    plan, snapshot, request = prepared.plan, prepared.snapshot, prepared.request
    by_id = {m.id: m for m in prepared.messages}
    kept = [by_id[mid] for mid in plan.kept]
    transcript_path = ctx.history(session)
    body = prepared.body

    held = _held_now(session, prepared, ctx)
    # what was appended since it was planned stays in view too: a kept call answered there
    # (an edit the user allowed while it ran) shows its file as a kept answer does
    appended = session.view_messages()[len(snapshot) :]  # (_check refuses any other change)
    restored = _restore(ctx, [*kept, *appended], session, held.touched or [])
    again = [path for message, _ in restored.files if (path := attachment_path(message))]
    # an earlier restore's copy of a file restored again is stale: the fresh one replaces it
    replaced = stale_copies(kept, [message for message, _ in restored.files])
    report(ctx, "Checking what the summary kept", 0.8)
    kept_figures, ledger_text = _retained(prepared, ctx, transcript_path, again)
    if not dry_run:
        # The ledger is made: nothing counts with these again (a draft's dry run keeps
        # them for its commit), and they hold every text they counted (the prompts, their
        # cuts), alive past what follows, the compaction's peak, else.
        prepared.counts = None
    summary, notes, body = summary_messages(prepared, ledger_text, transcript_path)
    for message, _ in restored.files:  # with its framing, as the meter counts a message
        message.tokens = ctx.estimator.count_message(message)
    report(ctx, f"Restoring {count_noun(len(restored.files), 'file')}", 0.85)
    attachments = [*notes, *(message for message, _ in restored.files)]
    new_view = in_place_of_stale(layout_view(plan, summary, attachments, by_id), replaced)
    new_view, attachments = with_plan_and_todos(
        held.latest, summary, new_view, attachments, ctx.estimator.count_message
    )

    report(ctx, "Checking the new conversation", 0.9)
    late = _check(session, snapshot, new_view)
    pre_tokens = prepared.pre_tokens
    view = prepared.messages
    if late:  # prepared earlier: the context grew since, and the late messages stay
        usage = compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
        pre_tokens, view = usage.used_tokens, [*view, *late]
    restored_ids = {message.id for message, _ in restored.files}
    unrestored = [m for m in [*new_view, *late] if m.id not in restored_ids]
    before, after = pre_tokens, after_compaction(session, ctx, unrestored)
    share = None if late else prepared.replaced_share  # figured ahead, off the loop
    reclaimable = min(pre_tokens, estimate(session, ctx, view, own=share))
    warnings = [*prepared.warnings, *check_smaller(ctx, before, after, reclaimable, dry_run)]
    media = kept_media_warning([*new_view, *late])  # a request still over the API's bytes
    warnings += [media] if media is not None else []
    went = dropped(
        [by_id[mid] for mid in plan.summarize],
        kept,
        prepared.body,
        ledger_text,
        [*restored.skipped, *restored.left_out],
        prepared.facts,
        again,
        prepared.checked,
    )
    summary.dropped = lines(went)  # the summary card lists them
    view_after = {m.id: None for m in new_view}  # (in order)
    boundary = Boundary(
        id=request.boundary_id or new_id("cmp"),
        trigger=request.trigger,
        direction=plan.direction,
        summarizer=prepared.summarizer,
        pre_tokens=pre_tokens,
        post_tokens=after_compaction(session, ctx, [*new_view, *late]),
        summary_id=summary.id,
        new_messages=[summary, *attachments],
        stands_for={
            summary.id: list(plan.span),
            **{m.id: replaced.get(m.id, []) for m in attachments},
        },
        summarized_ids=list(plan.summarize),
        kept_ids=[mid for mid in plan.kept if mid in view_after],
        view_before=snapshot,
        view_after=list(view_after),
        restored_files=[file for _, file in restored.files],
        skipped_files=restored.skipped,
        retention=kept_figures,
        adjusted_pivot=plan.adjusted_pivot,
        instructions=prepared.instructions,
    )
    if dry_run:
        result = CompactResult.from_boundary(boundary, None)
        update = {"warnings": warnings, "dry_run": True, "boundary_id": "", "dropped": went}
        return result.model_copy(update=update)
    report(ctx, "Committing", 0.95)
    session.commit_boundary(boundary)
    report(ctx, "Compacted", 1.0)
    # the figure the meter shows from now on (the same computation), not a second estimate
    usage = compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
    result = CompactResult.from_boundary(boundary, body)
    update = {"warnings": warnings, "post_tokens": usage.used_tokens, "dropped": went}
    return result.model_copy(update={**update, "summary_usage": prepared.summary_usage})


def _held_now(session: Session, prepared: PreparedSummary, ctx: CompactContext) -> HeldFacts:
    """What was read ahead from the session's held messages, while the session is still at
    that revision; else read now."""
    files = ctx.editor_files is not None
    held = prepared.held
    if held is None or held.revision != session.revision or (files and held.touched is None):
        held = read_held(
            session.revision, session.held_messages(), ctx.workspace_folders, files=files
        )
    return held


def _restore(
    ctx: CompactContext, kept: list[Message], session: Session, touched: list[SessionFile]
) -> Restored:
    if ctx.editor_files is None:
        return Restored()
    return restore_files(
        ctx.editor_files,
        kept=kept,
        settings=ctx.settings.restore,
        workspace_folders=ctx.workspace_folders,
        count_text=ctx.estimator.count_text,
        touched=touched,
        system_prompt=session.system_prompt,
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


def _check(session: Session, snapshot: list[str], new_view: list[Message]) -> list[Message]:
    """Refuse to commit a view that breaks the API's rules in a new way, or one planned from
    a view that has since changed other than by appends. Returns the appended messages."""
    current = session.view_messages()
    if session.view[: len(snapshot)] != snapshot:
        raise CompactionInProgress(
            "the conversation changed while it was being compacted; nothing was changed"
        )
    late = current[len(snapshot) :]
    problems = invariant_violations([*new_view, *late])
    if problems:  # the whole current view is checked only to tell which problems are new
        before = set(invariant_violations(current))
        problems = [p for p in problems if p not in before]
    if problems:
        raise BatonError("compaction would break the conversation: " + "; ".join(problems[:3]))
    return late


def report(ctx: CompactContext, text: str, fraction: float | None) -> None:
    """Progress is for show: a callback that fails must not fail (or, after the commit,
    seem to fail) the compaction."""
    if ctx.progress is None:
        return
    try:
        ctx.progress(text, fraction)
    except Exception as exc:
        log.debug("progress callback failed: %s", type(exc).__name__)


def count_noun(n: int, noun: str) -> str:
    """`3,723 messages`, `1 file`: how progress messages count."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
