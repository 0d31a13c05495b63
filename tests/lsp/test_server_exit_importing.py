"""`exit` while an import's read of its source file is held (a file on a hung network
mount): the process ends then, nothing of the import left under a session's name."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import server_env
from test_server_lifecycle import request, shutdown_then_exit, started
from test_server_malformed import RawPipe

from baton import protocol
from baton_testkit.claude_code_gen import generate
from baton_testkit.holding import holding, no_traceback, until_held

READ = "baton.core.importers.claude_code_read.open_import"  # in the import's thread


async def test_exit_ends_the_process_while_an_import_reads_its_file(tmp_path: Path) -> None:
    """`shutdown` then `exit` while an import's read of its file was held: the import ran
    in the loop's default executor, whose threads the process's end waits for, and the
    cancelled import waited for its thread: the process never ended. It ends at `exit`
    now, with the read still held, and no session is made of the import."""
    source = tmp_path / "claude.jsonl"
    records = generate(0, era="newest", turns=3, media=False).records
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    data_dir = tmp_path / "data"
    async with holding(READ, ["serve"], server_env(data_dir)) as process:
        raw = RawPipe(process)
        await started(raw)
        await raw.send(request(3, protocol.SESSION_IMPORT, {"path": str(source)}))
        told = await until_held(process)
        code = await shutdown_then_exit(raw)  # the read is held still: it never returns
    await no_traceback(told)
    assert code == 0
    assert list((data_dir / "sessions").glob("*.jsonl")) == []
