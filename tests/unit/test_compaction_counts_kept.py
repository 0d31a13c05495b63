"""How long a prepared summary keeps the token counts its summary and ledger shared."""

from __future__ import annotations

from pathlib import Path

from baton.core.compaction.commit import commit_summary
from baton.core.compaction.engine import CompactContext, summarize
from baton.core.compaction.prepared_summary import check_retention
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator


def talk(store: SessionStore) -> Session:
    session = store.create(title="long")
    for n in range(60):  # prompts the summary cuts and the ledger lists again
        session.append([MessageInput(role="user", content=f"ask {n}: " + "detail " * 60)])
        session.append([MessageInput(role="assistant", content=f"answer {n}")])
    return session


def context(estimator: Estimator) -> CompactContext:
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2))
    return CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text, 1_500))


async def test_a_commit_lets_go_of_the_counts_a_dry_run_keeps_for_it(
    store: SessionStore, estimator: Estimator, tmp_path: Path
) -> None:
    session, ctx = talk(store), context(estimator)
    prepared = await summarize(session, CompactRequest(direction="all"), ctx)
    assert prepared.counts  # the summary's counts, for the ledger's
    ledger = check_retention(prepared, ctx, str(tmp_path / "t.jsonl"))

    commit_summary(session, prepared, ctx, dry_run=True)  # a draft measured: it commits later
    assert prepared.counts

    result = commit_summary(session, prepared, ctx)
    # the ledger is made: the counts (every text they counted) are not held past it
    assert prepared.counts is None
    assert result.boundary_id and session.view_messages()[0].boundary_id == result.boundary_id
    # a check made again counts afresh, and answers the same
    assert check_retention(prepared, ctx, str(tmp_path / "t.jsonl")) == ledger
