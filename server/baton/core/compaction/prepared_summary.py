"""A summary written for a snapshot of the view, not committed yet, and the checks of it
made ahead of the commit, off the event loop: what it kept of the summarized facts (the
ledger of the rest) and the facts it dropped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baton.core.compaction.cuts import SharedCounts, counts_shared
from baton.core.compaction.dropped import FactsChecked, check_facts
from baton.core.compaction.figures import view_share
from baton.core.compaction.plan import Plan
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.ledger import Unkept, retention, unkept
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.working_set.held_facts import HeldFacts
from baton.core.conversation.boundary import Retention
from baton.core.conversation.messages import ApiUsage, CompactionBlock, Message

if TYPE_CHECKING:
    from baton.core.compaction.engine import CompactContext


@dataclass
class PreparedSummary:
    """A summary written for a snapshot of the view, not committed yet (`summarize`).

    `commit_summary` turns it into a boundary: now for an ordinary compaction, later for
    one prepared in the background (messages appended meanwhile follow the new view)."""

    request: CompactRequest
    plan: Plan
    snapshot: list[str]  # the view the plan was made from
    messages: list[Message]  # its messages, the very objects (a replaced one is another)
    body: str
    instructions: str | None
    summarizer: str
    pre_tokens: int  # the usage when the plan was made
    facts: SpanFacts | None = None  # the span's facts, extracted once for the summary
    counts: SharedCounts | None = None  # the summary's token counts, for the ledger's
    block: CompactionBlock | None = None  # the API's own summary (`server`), stored as is
    warnings: list[str] = field(default_factory=list)  # for the client (a fallback's reason)
    # the retention check, when made ahead of the commit (`check_retention`): it reads only
    # the prepared summary, so it may run off the event loop
    retained: tuple[Retention, str | None] | None = None
    # the summary requests' usage as the API reported it (None: no model was asked)
    summary_usage: ApiUsage | None = None
    # what the commit reads from every message the session holds, when read ahead (off
    # the event loop): used while the session is still at its revision
    held: HeldFacts | None = None
    # the span's facts checked against the summary, the kept messages and the ledger, when
    # checked ahead (`check_ahead`, off the event loop) for what the compaction dropped
    checked: FactsChecked | None = None
    # the span's prompts, errors and instructions the summary and kept messages lack, when
    # found ahead (`check_ahead`): a retention check made again at the commit (a file it
    # restores is a path of the span) checks the paths alone
    unkept: Unkept | None = None
    # the snapshot's own share of its estimate (`figures.view_share`), when figured ahead
    # (`check_ahead`): what the compaction may reclaim, unless messages came in since
    replaced_share: tuple[int, int] | None = None


def check_retention(
    prepared: PreparedSummary,
    ctx: CompactContext,
    transcript_path: str,
    restored: Sequence[str] = (),
) -> tuple[Retention, str | None]:
    """What the summary kept of the summarized facts, and the ledger of the rest (the
    paths of the files `restored` are kept)."""
    by_id = {m.id: m for m in prepared.messages}
    with counts_shared(prepared.counts):
        return retention(
            [by_id[mid] for mid in prepared.plan.summarize],
            prepared.body,
            [by_id[mid] for mid in prepared.plan.kept],
            count_text=ctx.estimator.count_text,
            transcript_path=transcript_path,
            facts=prepared.facts,
            restored=restored,
            ahead=prepared.unkept,
        )


def check_ahead(prepared: PreparedSummary, ctx: CompactContext, transcript_path: str) -> None:
    """What the summary kept (`check_retention`) and the facts it dropped (`check_facts`),
    checked off the event loop: both read the prepared summary alone. The commit uses them
    for the files it restores then, checking again only the paths those change. The view
    it replaces is figured here too (`replaced_share`)."""
    prepared.replaced_share = view_share(ctx, prepared.messages)
    if prepared.facts is None:
        prepared.retained = check_retention(prepared, ctx, transcript_path)
        return
    by_id = {m.id: m for m in prepared.messages}
    kept = [by_id[mid] for mid in prepared.plan.kept]
    prepared.unkept = unkept(prepared.facts, prepared.body, kept)
    prepared.retained = check_retention(prepared, ctx, transcript_path)
    ledger_text = prepared.retained[1]
    prepared.checked = check_facts(prepared.facts, kept, prepared.body, ledger_text)
