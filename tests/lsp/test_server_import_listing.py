"""An import looks for the earlier imports of its file in the data dir's list: that read
(every transcript new to the index, seconds for a few large ones) runs in a worker thread,
so that other requests are answered meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import server_env
from test_server_lifecycle import request, session_with, shutdown_then_exit, started
from test_server_malformed import RawPipe

from baton import protocol
from baton_testkit.claude_code_gen import generate
from baton_testkit.holding import holding, no_traceback, until_held

LIST = "baton.core.conversation.store.SessionStore:summaries"  # the index brought up to date


async def test_other_requests_are_answered_while_an_import_reads_the_list(
    tmp_path: Path,
) -> None:
    """An import read the data dir's list on the event loop (to name the sessions an
    earlier import of its file made): with that read held (a data dir of many sessions, or
    large transcripts new to the index, on a slow disk), the server answered nothing else.
    A get of another session is answered now, and `exit` ends the process."""
    source = tmp_path / "claude.jsonl"
    records = generate(0, era="newest", turns=3, media=False).records
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    data_dir = tmp_path / "data"
    async with holding(LIST, ["serve"], server_env(data_dir)) as process:
        raw = RawPipe(process)
        await started(raw)
        sid, _ = await session_with(raw, 2)
        await raw.send(request(4, protocol.SESSION_IMPORT, {"path": str(source)}))
        told = await until_held(process)
        await raw.send(request(5, protocol.SESSION_GET, {"sessionId": sid}))
        view = (await raw.response(5))["result"]
        code = await shutdown_then_exit(raw)
    await no_traceback(told)
    assert len(view["messages"]) == 4
    assert code == 0
