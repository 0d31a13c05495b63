"""`exit` while a read of a session's lane still runs in its worker thread (a page of
the view, the check of an undo): the process ends then, nothing written, the transcript
read back whole."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import conversation, server_env
from test_server_exit_compacting import until_held
from test_server_lifecycle import INITIALIZED, SHUTDOWN, exit_code, initialize, read_back, request
from test_server_malformed import RawPipe

from baton import protocol
from baton.core.service import undos

HELD = "held by the test"  # said on stderr once the lane's thread is held (until_held)

# `python -m baton serve` whose lane holds its worker thread in `target`, never to let
# it go; every undo goes to the lane (as one of a long session does)
HOLDING = """
import importlib, runpy, sys, threading
from baton.core.service import undos

def held(*args, **kwargs):
    print({held!r}, file=sys.stderr, flush=True)
    threading.Event().wait()

undos.OFF_LOOP_MESSAGES = 1
module, _, name = {target!r}.rpartition(".")
owner, _, attribute = name.rpartition(":")
found = importlib.import_module(module)
setattr(getattr(found, owner) if owner else found, attribute, held)
sys.argv = ["baton", "serve"]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""

PAGE = "baton.core.service.service.BatonService:render_data"  # a get's page, in the lane
UNDO = f"{undos.__name__}._checked_watched"  # an undo's check, in the lane


async def holding_server(data_dir: Path, target: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *[sys.executable, "-c", HOLDING.format(held=HELD, target=target)],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(data_dir),
    )


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
    process = await holding_server(data_dir, target)
    raw = RawPipe(process)
    try:
        await raw.send(initialize(1))
        await raw.response(1)
        await raw.send(INITIALIZED)
        await raw.send(request(2, protocol.SESSION_CREATE, {}))
        sid = (await raw.response(2))["result"]["sessionId"]
        append = {"sessionId": sid, "messages": conversation(40)}
        await raw.send(request(3, protocol.SESSION_APPEND, append))
        await raw.response(3)
        await raw.send(request(4, protocol.COMPACT, {"sessionId": sid}))
        assert "error" not in await raw.response(4)
        await raw.send(request(5, protocol.SESSION_GET, {"sessionId": sid}))  # not held yet
        before = await raw.response(5) if target == UNDO else None
        await raw.send(held_request(target, sid))
        await until_held(process)
        told = asyncio.ensure_future(process.stderr.read())  # type: ignore[union-attr]
        await raw.send(SHUTDOWN)
        await raw.response(2)
        code = await exit_code(raw)  # the thread is held still: it never finishes
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    stderr = (await told).decode()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert view["session"]["compactions"] == 1  # the undo never committed
    if before is not None:
        assert view["messages"] == before["result"]["messages"]
