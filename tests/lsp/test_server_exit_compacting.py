"""`exit` while an offline compaction's worker thread still runs: the process ends then,
the compaction cancelled before it committed, and the transcript reads back whole."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import server_env
from test_server_lifecycle import read_back, request, session_with, shutdown_then_exit, started
from test_server_malformed import RawPipe

from baton import protocol
from baton_testkit.holding import holding, no_traceback, until_held

# the summary is never written: the compaction holds its worker thread
SUMMARY = "baton.core.compaction.engine.summarize"


async def test_exit_ends_the_process_while_an_offline_compactions_thread_still_runs(
    tmp_path: Path,
) -> None:
    """`shutdown` then `exit` while an offline compaction ran in its worker thread: the
    process waited for the thread to finish (some 4 s for 3,000 messages), forever for
    one that never does. It ends at `exit` now, with the thread still held."""
    data_dir = tmp_path / "data"
    async with holding(SUMMARY, ["serve"], server_env(data_dir)) as process:
        raw = RawPipe(process)
        await started(raw)
        sid, ids = await session_with(raw, 40)
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        told = await until_held(process)
        code = await shutdown_then_exit(raw)  # the thread is held still: it never finishes
    await no_traceback(told)
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert view["session"]["compactions"] == 0
    assert [m["id"] for m in view["messages"]] == ids
