"""Over stdio: the list after an import reads none of the new transcript (the import
handed the list's index its entry, `StagedTranscript.finish`), where it summarized the
whole file again (0.8-1.2 s for a 100 MB import, every list behind it waiting)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from lsp_harness import server_env
from test_server_lifecycle import request, shutdown_then_exit, started
from test_server_malformed import RawPipe

from baton import protocol
from baton_testkit.claude_code_gen import generate

SUMMARIZED = "summarized by the list:"
# `baton serve` whose list's index says on stderr each transcript it summarizes
SCRIPT = f"""
import runpy, sys
from pathlib import Path
from baton.core.conversation import listing

read = listing.summarize

def said(path, *args, **kwargs):
    print({SUMMARIZED!r}, Path(path).name, flush=True, file=sys.stderr)
    return read(path, *args, **kwargs)

listing.summarize = said
sys.argv = ["baton", "serve"]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


async def test_the_list_after_an_import_reads_none_of_the_new_transcript(
    tmp_path: Path,
) -> None:
    source = generate(5, era="newest", compactions=1).write(tmp_path / "claude.jsonl")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(tmp_path / "data"),
    )
    try:
        raw = RawPipe(process)
        await started(raw)
        await raw.send(request(4, protocol.SESSION_IMPORT, {"path": str(source)}))
        sid = (await raw.response(4))["result"]["sessionId"]
        await raw.send(request(5, protocol.SESSION_LIST, {}))
        listed = (await raw.response(5))["result"]["sessions"]
        code = await shutdown_then_exit(raw)
        assert process.stderr is not None
        told = (await process.stderr.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert [s["sessionId"] for s in listed] == [sid]
    read = [line.split()[-1] for line in told.splitlines() if line.startswith(SUMMARIZED)]
    assert f"{sid}.jsonl" not in read
    assert code == 0
    assert "Traceback" not in told, json.dumps(told[-2000:])
