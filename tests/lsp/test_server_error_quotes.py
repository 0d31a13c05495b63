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


async def test_a_new_sessions_model_name_is_bounded_as_a_switch_of_it_is(tmp_path: Path) -> None:
    """baton/session/create took a model of any length (baton/session/setModel refuses
    one past 200 characters): a session made with a megabyte of model name carried it in
    its header, its session document's header line and every request to the API."""
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    raw = RawPipe(process)
    try:
        await started(raw)
        await raw.send(request(2, protocol.SESSION_CREATE, {"model": "c" * 201}))
        refused = (await raw.response(2))["error"]
        await raw.send(request(3, protocol.SESSION_CREATE, {"model": "c" * 200}))
        made = (await raw.response(3))["result"]
        await raw.send(request(4, protocol.SESSION_LIST, {}))
        listed = (await raw.response(4))["result"]["sessions"]
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert refused["data"]["code"] == "invalid_params"
    assert refused["data"]["problems"] == ["model: String should have at most 200 characters"]
    assert [s["sessionId"] for s in listed] == [made["sessionId"]]  # the refused one: none
