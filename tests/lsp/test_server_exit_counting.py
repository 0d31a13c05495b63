"""`exit` while a request's large input is counted in its worker thread (an append's
batch, a draft's usage): the process ends then, nothing of the request written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import conversation
from test_server_exit_compacting import until_held
from test_server_exit_reading import holding_server
from test_server_lifecycle import INITIALIZED, SHUTDOWN, exit_code, initialize, read_back, request
from test_server_malformed import RawPipe

from baton import protocol
from baton.core.service import heavy

BATCH = "baton.core.conversation.session.Session:prepared"  # an append's batch counted
DRAFT = f"{heavy.__name__}.draft_tokens"  # a draft's tokens counted
LONG = "words " * 20_000  # past heavy.OFF_LOOP_CHARS: counted in a worker thread


def held_request(target: str, sid: str) -> dict[str, object]:
    if target == BATCH:
        batch = {"sessionId": sid, "messages": [{"role": "user", "content": LONG}]}
        return request(4, protocol.SESSION_APPEND, batch)
    return request(4, protocol.USAGE, {"sessionId": sid, "draft": {"text": LONG}})


@pytest.mark.parametrize("target", [BATCH, DRAFT], ids=["append", "draft"])
async def test_exit_ends_the_process_while_a_requests_input_is_counted(
    tmp_path: Path, target: str
) -> None:
    """`shutdown` then `exit` while a large append's batch (or a draft) was counted in a
    worker thread: the process waited for the count to finish (the loop's executor is
    joined as the process ends), forever for one that never does. It ends at `exit` now,
    the append never written."""
    assert len(LONG) > heavy.OFF_LOOP_CHARS
    data_dir = tmp_path / "data"
    process = await holding_server(data_dir, target)
    raw = RawPipe(process)
    try:
        await raw.send(initialize(1))
        await raw.response(1)
        await raw.send(INITIALIZED)
        await raw.send(request(2, protocol.SESSION_CREATE, {}))
        sid = (await raw.response(2))["result"]["sessionId"]
        append = {"sessionId": sid, "messages": conversation(4)}
        await raw.send(request(3, protocol.SESSION_APPEND, append))
        ids = (await raw.response(3))["result"]["messageIds"]
        await raw.send(held_request(target, sid))
        await until_held(process)
        told = asyncio.ensure_future(process.stderr.read())  # type: ignore[union-attr]
        await raw.send(SHUTDOWN)
        await raw.response(2)
        code = await exit_code(raw)  # the count is held still: it never finishes
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    stderr = (await told).decode()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert [m["id"] for m in view["messages"]] == ids  # the held append never written
