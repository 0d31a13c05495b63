"""A damaged transcript over the wire: the session still serves every request and says
what it lost; a create that cannot be written leaves nothing behind."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from lsp_harness import Harness, conversation

from baton import protocol

Starter = Callable[..., Awaitable[Harness]]


def corrupt_line(path: Path, message_id: str) -> None:
    lines = path.read_bytes().split(b"\n")
    for n, line in enumerate(lines):
        if line and json.loads(line).get("message", {}).get("id") == message_id:
            lines[n] = b'{"type": "message", "message": {garbage'
            path.write_bytes(b"\n".join(lines))
            return
    raise AssertionError(message_id)


async def test_a_lost_kept_message_leaves_the_session_serving_and_reported(
    start_server: Starter,
) -> None:
    lsp = await start_server()
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    await lsp.close()
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    corrupt_line(path, ids[5])  # a message the compaction kept

    lsp = await start_server()
    listed = (await lsp.request(protocol.SESSION_LIST))["sessions"]
    assert listed[0]["damaged"]["lines"] == 1
    view = await lsp.get(sid)
    damaged = view["session"]["damaged"]
    assert damaged["lines"] == 1 and damaged["lostMessages"] == 1
    assert not damaged["headerMissing"] and damaged["problems"]
    assert ids[5] not in [m["id"] for m in view["messages"]]
    await lsp.request(protocol.USAGE, {"sessionId": sid})
    await lsp.render(sid)
    published = await lsp.diagnostics(
        sid, lambda p: any(d.code == "damaged-transcript" for d in p.diagnostics)
    )
    warning = next(d for d in published.diagnostics if d.code == "damaged-transcript")
    assert "lost" in warning.message and "unreadable" in warning.message
    await lsp.append(sid, *conversation(1))
    await lsp.request(protocol.UNCOMPACT, {"sessionId": sid})
    after = await lsp.get(sid)
    assert after["session"]["compactions"] == 0
    assert [m["id"] for m in after["messages"]][:4] == ids[:4]
    assert path.with_suffix(".jsonl.bad").read_bytes().startswith(b'{"type": "message"')


async def test_a_healthy_session_has_no_damaged_field(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(1))
    assert "damaged" not in (await lsp.get(sid))["session"]


async def test_a_create_that_cannot_be_written_is_invalid_and_leaves_no_ghost(
    lsp: Harness,
) -> None:
    for params in ({"title": "a\ud800b"}, {"systemPrompt": "\udfff"}, {"model": "m\ud800"}):
        error = await lsp.error(protocol.SESSION_CREATE, params)
        assert error.baton_code == "invalid_params", params
    sessions = lsp.data_dir / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []
    assert (await lsp.request(protocol.SESSION_LIST))["sessions"] == []
    sid = (await lsp.create())["sessionId"]
    error = await lsp.error(
        protocol.SESSION_APPEND,
        {"sessionId": sid, "messages": [{"role": "user", "content": "x\ud800"}]},
    )
    assert error.baton_code == "invalid_params"
    error = await lsp.error(protocol.COMPACT, {"sessionId": sid, "instructions": "keep \ud800"})
    assert error.baton_code == "invalid_params"


async def test_a_headerless_file_is_listed_as_damaged_and_refuses_appends(
    lsp: Harness,
) -> None:
    sessions = lsp.data_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    ghost = sessions / "s_0123456789abcdef.jsonl"
    ghost.write_bytes(b"")
    listed = (await lsp.request(protocol.SESSION_LIST))["sessions"]
    assert [s["sessionId"] for s in listed] == ["s_0123456789abcdef"]
    assert listed[0]["damaged"]["headerMissing"] and listed[0]["readOnly"]
    error = await lsp.error(
        protocol.SESSION_APPEND,
        {"sessionId": "s_0123456789abcdef", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert error.baton_code == "session_locked"
    assert ghost.read_bytes() == b""
