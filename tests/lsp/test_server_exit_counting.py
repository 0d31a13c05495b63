"""`exit` while a request's large input is counted in its worker thread (an append's
batch, a draft's usage): the process ends then, nothing of the request written."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import server_env
from test_server_lifecycle import read_back, request, session_with, shutdown_then_exit, started
from test_server_malformed import RawPipe

from baton import protocol
from baton.core.service import heavy
from baton_testkit.holding import holding, no_traceback, until_held

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
    async with holding(target, ["serve"], server_env(data_dir)) as process:
        raw = RawPipe(process)
        await started(raw)
        sid, ids = await session_with(raw, 4)
        await raw.send(held_request(target, sid))
        told = await until_held(process)
        code = await shutdown_then_exit(raw)  # the count is held still: it never finishes
    await no_traceback(told)
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    assert [m["id"] for m in view["messages"]] == ids  # the held append never written
