"""`exit` while a read of a session's lane still runs in its worker thread (a page of
the view, the check of an undo): the process ends then, nothing written, the transcript
read back whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsp_harness import server_env
from test_server_lifecycle import read_back, request, session_with, shutdown_then_exit, started
from test_server_malformed import RawPipe

from baton import protocol
from baton.core.service import undos
from baton_testkit.holding import holding, no_traceback, until_held

PAGE = "baton.core.service.service.BatonService:render_data"  # a get's page, in the lane
UNDO = f"{undos.__name__}._checked_watched"  # an undo's check, in the lane
# every undo goes to the lane (as one of a long session does)
EVERY_UNDO = "from baton.core.service import undos\nundos.OFF_LOOP_MESSAGES = 1"


def held_request(target: str, sid: str) -> dict[str, Any]:
    if target == PAGE:
        return request(6, protocol.SESSION_GET, {"sessionId": sid})
    return request(6, protocol.UNCOMPACT, {"sessionId": sid})


@pytest.mark.parametrize("target", [PAGE, UNDO], ids=["get", "uncompact"])
async def test_exit_ends_the_process_while_a_read_in_the_lane_still_runs(
    tmp_path: Path, target: str
) -> None:
    """`shutdown` then `exit` while a get's page or an undo's check ran in the session's
    lane: the process waited for the thread to finish, forever for one that never does.
    It ends at `exit` now, with the thread still held."""
    data_dir = tmp_path / "data"
    async with holding(target, ["serve"], server_env(data_dir), EVERY_UNDO) as process:
        raw = RawPipe(process)
        await started(raw)
        sid, _ = await session_with(raw, 40)
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        assert "error" not in await raw.response(4)
        await raw.send(request(5, protocol.SESSION_GET, {"sessionId": sid}))  # not held yet
        before = await raw.response(5) if target == UNDO else None
        await raw.send(held_request(target, sid))
        told = await until_held(process)
        code = await shutdown_then_exit(raw)  # the thread is held still: it never finishes
    await no_traceback(told)
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert view["session"]["compactions"] == 1  # the undo never committed
    if before is not None:
        assert view["messages"] == before["result"]["messages"]
