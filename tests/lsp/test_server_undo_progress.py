"""`baton/uncompact` of a compaction that later summaries hold, over stdio: its check
undoes each of them, on a copy, twice, and says each step on the work-done progress (on
a long imported session it takes minutes)."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import Harness
from test_server_import import progress_of

from baton import protocol
from baton_testkit.claude_code_gen import generate


async def _held_summaries(lsp: Harness, sid: str) -> list[str]:
    """The boundaries of the summaries in the view and those inside them, outermost
    first (each imported summary summarizes the one before)."""
    view = await lsp.request(protocol.SESSION_GET, {"sessionId": sid})
    found = [m["boundaryId"] for m in view["messages"] if m.get("kind") == "summary"]
    while True:
        params = {"sessionId": sid, "boundaryId": found[-1]}
        replaced = await lsp.request(protocol.SESSION_REPLACED, params)
        inner = [m["boundaryId"] for m in replaced["messages"] if m.get("kind") == "summary"]
        if not inner:
            return found
        found.append(inner[0])


async def test_undoing_an_inner_compaction_says_each_step_of_its_check(
    lsp: Harness, tmp_path: Path
) -> None:
    source = generate(3, era="newest", compactions=3, turns=12).write(tmp_path / "cc.jsonl")
    sid = (await lsp.request(protocol.SESSION_IMPORT, {"path": str(source)}))["sessionId"]
    chain = await _held_summaries(lsp, sid)
    assert len(chain) == 3
    view = await lsp.request(protocol.SESSION_GET, {"sessionId": sid})
    assert view["session"]["compactions"] == 3
    lsp.client.progress_reports.setdefault("undo-1", [])
    mark = lsp.recorder.mark()
    params = {"sessionId": sid, "boundaryId": chain[-1], "workDoneToken": "undo-1"}
    await lsp.request(protocol.UNCOMPACT, params)
    await lsp.progress_end("undo-1")

    values = progress_of(lsp, "undo-1", after=mark)
    assert values[0]["title"] == "Baton: undoing a compaction"
    reports = [v for v in values if v["kind"] == "report"]
    assert {"kind": "report", "message": "Checking their undos once it is undone: 1 of 2",
            "percentage": 50} in reports  # fmt: skip
    view = await lsp.request(protocol.SESSION_GET, {"sessionId": sid})
    assert view["session"]["compactions"] == 2  # undone, the two that held it still in force
