"""What a PreCompact hook prints: a block decision or instructions longer than what a
warning shows are read whole; output that is no JSON object is reported, not ignored
without a word; and however much a hook prints, the server holds a bounded part of it."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.hooks import Hook, Hooks, run_hook
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import text_message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import CompactionBlocked
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text("import json, sys\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Session, CompactContext]:
    estimator = Estimator()
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=2))
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    session = SessionStore(tmp_path / "data", estimator.count_message).create(title="hooks")
    for n in range(12):
        session.append([text_message("user", f"Step {n}: carry on with the parser work.")])
        session.append([text_message("assistant", f"Working on step {n}. " * 40)])
    return session, ctx


async def test_a_block_with_a_long_reason_blocks(
    tmp_path: Path, setup: tuple[Session, CompactContext]
) -> None:
    session, ctx = setup
    decision = json.dumps({"decision": "block", "reason": "Frozen: " + "see the plan. " * 600})
    ctx.hooks = Hooks(pre=[Hook(script(tmp_path, "block", f"print({decision!r})\n"))])
    with pytest.raises(CompactionBlocked, match="blocked the compaction: Frozen: see the") as hit:
        await compact(session, CompactRequest(direction="all"), ctx)
    assert session.compactions == 0
    assert len(hit.value.message) < 5_000  # the reason is shown cut


async def test_long_instructions_are_taken_whole(
    tmp_path: Path, setup: tuple[Session, CompactContext]
) -> None:
    session, ctx = setup
    wanted = "Keep every SQL query verbatim. " * 200 + "And the last rule."
    printed = json.dumps({"instructions": wanted})
    ctx.hooks = Hooks(pre=[Hook(script(tmp_path, "adds", f"print({printed!r})\n"))])
    await compact(session, CompactRequest(direction="all"), ctx)
    boundary = session.boundaries[session.active[-1]]
    assert boundary.instructions is not None and boundary.instructions.endswith("the last rule.")


async def test_output_that_is_no_json_object_is_reported(
    tmp_path: Path, setup: tuple[Session, CompactContext]
) -> None:
    session, ctx = setup
    chatty = script(tmp_path, "chatty", "print('checked 3 branches, all clean')\n")
    ctx.hooks = Hooks(pre=[Hook(chatty)])
    result = await compact(session, CompactRequest(direction="all"), ctx)
    assert session.compactions == 1
    assert [w for w in result.warnings if "PreCompact" in w] == [
        f"the PreCompact hook `{' '.join(chatty)}` printed what is not a JSON object; "
        "its output was ignored"
    ]


async def test_a_flood_of_output_is_held_bounded(tmp_path: Path) -> None:
    flood = script(
        tmp_path,
        "flood",
        "chunk = b'y' * 65536\nfor _ in range(800):\n    sys.stdout.buffer.write(chunk)\n",
    )  # 52 MB, then it exits
    tracemalloc.start()
    try:
        run = await run_hook(Hook(flood), {"hook_event_name": "PreCompact"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.exit_code == 0 and run.warning is None
    assert run.stdout_cut and len(run.stdout) < 2_000_000
    assert peak < 8_000_000, peak
