"""An error answer quotes what it refused within bounds: an id of a megabyte, refused,
is not sent back whole."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsp_harness import spawn_stdio
from test_server_lifecycle import request, session_with, started
from test_server_malformed import RawPipe

from baton import protocol

HUGE = "m_" + "x" * 1_000_000

# each names an id the session has not: refused, quoting it
REFUSED = {
    protocol.SESSION_REWIND: "messageId",
    protocol.UNCOMPACT: "boundaryId",
    protocol.SESSION_REPLACED: "boundaryId",
    protocol.COMPACT_DISCARD_DRAFT: "draftId",
}


@pytest.mark.parametrize(("method", "field"), list(REFUSED.items()))
async def test_an_error_quotes_a_huge_id_it_refused_by_its_start_and_end(
    tmp_path: Path, method: str, field: str
) -> None:
    """A messageId (boundaryId, draftId) of a megabyte was quoted whole in the error's
    message and again in data.problems: two megabytes a client shows as the error."""
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    raw = RawPipe(process)
    try:
        await started(raw)
        sid, _ = await session_with(raw, 4)
        await raw.send(request(4, method, {"sessionId": sid, field: HUGE}))
        refused = (await raw.response(4))["error"]
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert len(json.dumps(refused)) < 4_000, json.dumps(refused)[:500]
    assert "m_xxx" in refused["message"]
    assert "characters left out" in refused["message"]
