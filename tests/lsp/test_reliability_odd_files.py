"""R5, more angles: a data dir's files that other programs made odd, over a real server.

A line nested past what a JSON parser reaches, a transcript with a second name (a hard
link) that may lie outside the data dir, a sessions folder that is a link. Each is read,
listed or refused as BEHAVIOR.md section 9 says: the server keeps answering, names the
path and the cause, and writes nothing through a link or a second name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lsp_harness import Harness, conversation

from baton import protocol

Starter = Callable[..., Awaitable[Harness]]  # the `start_server` fixture (tests/lsp/conftest)
NESTED = b"[" * 5_000 + b"]" * 5_000 + b"\n"  # 10 KB, past the parsers' depth


async def test_a_line_nested_too_deep_is_an_unreadable_line(start_server: Starter) -> None:
    """A line of brackets nested thousands deep (10 KB) failed every list with an
    internal error ("RecursionError"), and the session's get and delete too, and an append
    after such a torn last line: the parser's depth was never taken for unreadable."""
    lsp = await start_server()
    sid = (await lsp.create(title="nested"))["sessionId"]
    ids = (await lsp.append(sid, *conversation(2)))["messageIds"]
    await lsp.close()
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    with path.open("ab") as handle:
        handle.write(NESTED + NESTED[:-1])  # and again as a torn last line

    lsp = await start_server()
    listed = (await lsp.request(protocol.SESSION_LIST))["sessions"]
    assert [(s["sessionId"], s["damaged"]["lines"]) for s in listed] == [(sid, 1)]
    got = await lsp.get(sid)
    assert [m["id"] for m in got["messages"]] == ids
    assert got["session"]["damaged"]["lines"] == 1
    await lsp.append(sid, *conversation(1))
    assert path.with_suffix(".jsonl.bad").read_bytes() == NESTED
    assert path.with_suffix(".jsonl.torn").read_bytes() == NESTED
    await lsp.request(protocol.SESSION_DELETE, {"sessionId": sid})
    assert (await lsp.request(protocol.SESSION_LIST))["sessions"] == []
