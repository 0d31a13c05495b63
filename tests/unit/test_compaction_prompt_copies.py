"""What an extractive compaction holds beside the session while it runs: a prompt of
several blocks is joined once, for every reader (the span's facts, the summary), and its
list item and normalized form are made, counted or read, and let go, never held whole for
the compaction's length: the peak memory with a session open counts a compaction's
transient copies. It held four copies of the prompts (the join twice, the list items, the
normalized forms); one is what reading them takes."""

from __future__ import annotations

import tracemalloc

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import MessageInput, TextBlock
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator

PROMPTS = 40
PROMPT_CHARS = 50_000


def prompt(n: int) -> list[TextBlock]:
    """A prompt as an editor sends one: the file open beside it, then what was asked."""
    words = " ".join(f"step{n}_{i % 97} of the parser" for i in range(PROMPT_CHARS // 24))
    return [
        TextBlock(text=f"<ide_opened_file>src/parser_{n}.py</ide_opened_file>"),
        TextBlock(text=f"Rework the parser, round {n}: {words}\n"),
    ]


async def test_a_compaction_holds_no_whole_copy_of_its_prompts(
    store: SessionStore, estimator: Estimator
) -> None:
    session = store.create("Long prompts", "claude-sonnet-4-5")
    for n in range(PROMPTS):
        session.append([MessageInput(role="user", content=prompt(n))])
        session.append([MessageInput(role="assistant", content=f"Round {n} done.")])
    prompts_bytes = sum(
        len(b.text) for m in session.view_messages() if m.role == "user" for b in m.content
    )
    ctx = CompactContext(Settings(), estimator, ExtractiveSummarizer(estimator.count_text))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = await compact(session, CompactRequest(direction="all"), ctx)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert result.boundary_id
    assert peak < 2 * prompts_bytes, (peak, prompts_bytes)
