"""Compaction drafts: a compaction's summary written and measured, not committed, for the
user to read, edit, apply or discard (`CompactDraft` on the wire, `draft_record.py`).

A draft is the `PreparedSummary` the commit would take, measured by the commit itself in
its dry run (so its `postTokens` is the figure the commit gives). Its record lives beside
the transcript, `<sessionId>.draft.json` (one draft per session, a new preview replaces
it): never a transcript event, so replay, undo and the session list never see it. The
record holds what the commit needs again (the request, the summary, the API's block) and
a fingerprint of the session (its view and its transcript's events but renames): applying
re-plans the same compaction, and refuses (`draft_stale`) when the session changed since
in any way but a rename (`draft_file.unchanged`), or the record is of an earlier format.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

from baton.core.compaction import engine
from baton.core.compaction.commit import commit_summary
from baton.core.compaction.cost import draft_cost
from baton.core.compaction.draft_file import draft_path, fingerprint, unchanged
from baton.core.compaction.draft_record import (
    CHANGED,
    EARLIER_FORMAT,
    RECORD_VERSION,
    CompactDraft,
    request_of,
    save_record,
)
from baton.core.compaction.engine import CompactContext, bounded_keep_window
from baton.core.compaction.plan import plan_compaction
from baton.core.compaction.prepared_summary import PreparedSummary, check_retention
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.conversation.messages import CompactionBlock, new_id
from baton.core.conversation.session import Session
from baton.core.errors import DraftStale, InvalidParams
from baton.core.usage.session_usage import compute_usage

EDITED_WARNING = "the summary was edited before it was applied"


async def make_draft(
    session: Session, request: CompactRequest, ctx: CompactContext, *, model: str
) -> CompactDraft:
    """Summarize and measure a compaction of the session as it is now and save its record;
    the transcript is not touched."""
    before = fingerprint(session)
    prepared = await engine.summarize(session, replace(request, dry_run=False), ctx)
    prepared.retained = check_retention(prepared, ctx, str(session.transcript.path))
    measured = commit_summary(session, prepared, ctx, dry_run=True)
    if not unchanged(session, before):
        raise DraftStale("the conversation changed while the draft was written; try again")
    draft = _draft(session, prepared, measured, ctx, model)
    save_record(session, draft, prepared, before)
    return draft


def _draft(
    session: Session,
    prepared: PreparedSummary,
    measured: CompactResult,
    ctx: CompactContext,
    model: str,
) -> CompactDraft:
    retained = prepared.retained
    return CompactDraft(
        draft_id=new_id("draft"),
        session_id=session.session_id,
        direction=measured.direction,
        summary=prepared.body,
        ledger=retained[1] if retained else None,
        summarizer=prepared.summarizer,
        instructions=prepared.instructions,
        summarized_message_ids=measured.summarized_message_ids,
        kept_message_ids=measured.kept_message_ids,
        pinned_message_ids=list(prepared.plan.pinned),
        restored_files=measured.restored_files,
        skipped_files=measured.skipped_files,
        pre_tokens=measured.pre_tokens,
        post_tokens=measured.post_tokens,
        retention=measured.retention,
        adjusted_pivot=measured.adjusted_pivot,
        dropped=measured.dropped,
        cost=draft_cost(
            session,
            prepared,
            ctx,
            model=model,
            pre_tokens=measured.pre_tokens,
            post_tokens=measured.post_tokens,
        ),
        warnings=measured.warnings,
    )


def remeasure(
    session: Session, record: dict[str, Any], ctx: CompactContext, summary: str, *, model: str
) -> CompactDraft:
    """The draft of `record` with `summary` as its text, measured again (no summarizer
    runs): the figures the commit of the edited text will give. It replaces the draft."""
    before = fingerprint(session)
    prepared = prepared_from_record(session, record, ctx, summary)
    prepared.retained = check_retention(prepared, ctx, str(session.transcript.path))
    measured = commit_summary(session, prepared, ctx, dry_run=True)
    draft = _draft(session, prepared, measured, ctx, model)
    save_record(session, draft, prepared, before)
    return draft


# ---- applying ----------------------------------------------------------------------------


def prepared_from_record(
    session: Session, record: dict[str, Any], ctx: CompactContext, summary: str | None = None
) -> PreparedSummary:
    """The prepared summary a draft stands for, planned again on the session as it is now
    (refused when it changed since the draft was made); `summary` replaces the text."""
    if record.get("version") != RECORD_VERSION:
        draft_id = record["draft"]["draftId"]
        raise DraftStale(f"draft {draft_id} was {EARLIER_FORMAT}; preview the compaction again")
    if not unchanged(session, record.get("fingerprint")):
        raise DraftStale(
            f"{CHANGED} draft {record['draft']['draftId']} was made; preview the compaction again"
        )
    draft = CompactDraft.model_validate(record["draft"])
    request = request_of(record)
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
    kept = set(plan.kept)  # (a draft's kept ids leave out a stale copy a fresh one replaced)
    if plan.summarize != draft.summarized_message_ids or not kept >= set(draft.kept_message_ids):
        raise DraftStale(
            "the settings changed since the draft was made (it would summarize other "
            "messages now); preview the compaction again"
        )
    edited = summary is not None and summary != draft.summary
    if edited and not (summary or "").strip():
        raise InvalidParams("an edited summary cannot be empty")
    block = None
    if record.get("block") is not None and not edited:
        block = CompactionBlock.model_validate(record["block"])
    by_id = {m.id: m for m in view}
    return PreparedSummary(
        request=request,
        plan=plan,
        snapshot=[m.id for m in view],
        messages=view,
        body=summary if edited and summary is not None else draft.summary,
        instructions=draft.instructions,
        summarizer=draft.summarizer,
        pre_tokens=usage.used_tokens,
        facts=SpanFacts.extract([by_id[mid] for mid in plan.summarize]),
        block=block,
        summary_usage=draft.cost.summary_usage,  # the request that wrote the draft
        warnings=[
            *draft.warnings,
            *([EDITED_WARNING] if edited and EDITED_WARNING not in draft.warnings else []),
        ],
    )


def apply(
    session: Session,
    record: dict[str, Any],
    ctx: CompactContext,
    summary: str | None = None,
) -> CompactResult:
    """Commit the draft of `record` (`load_record`), within a compaction's frame
    (`engine.run_compaction`): its summary as written, or `summary` exactly as edited
    (counted again, with the fact ledger of what it no longer carries); its record goes."""
    prepared = prepared_from_record(session, record, ctx, summary)
    result = engine.commit_summary(session, prepared, ctx)
    with contextlib.suppress(OSError):  # committed: a record left behind is stale anyway
        draft_path(session).unlink(missing_ok=True)
    return result
