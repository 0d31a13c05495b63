"""R5, more angles: a data dir's files that other programs made odd, over a real server.

A line nested past what a JSON parser reaches, a transcript with a second name (a hard
link) that may lie outside the data dir, a sessions folder that is a link. Each is read,
listed or refused as BEHAVIOR.md section 9 says: the server keeps answering, names the
path and the cause, and writes nothing through a link or a second name."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from lsp_harness import Harness, conversation, user
from lsprotocol import types

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


async def test_a_transcript_with_a_second_name_is_never_written(
    start_server: Starter, tmp_path: Path
) -> None:
    """A transcript hard-linked to a file outside the data dir (`ln`, or a backup that
    links its copies) was written like any other: an append, and a torn line's repair,
    landed in the file outside too. A file of the data dir with more than one name is read,
    never written: listed and opened read-only, a change answers `storage_error` saying
    why, whether the second name was there before the server opened it or came after."""
    lsp = await start_server()
    before = (await lsp.create(title="linked before"))["sessionId"]
    after = (await lsp.create(title="linked after"))["sessionId"]
    for sid in (before, after):
        await lsp.append(sid, *conversation(1))
    folder = lsp.data_dir / "sessions"
    await lsp.close()
    outside = tmp_path / "outside.jsonl"
    os.link(folder / f"{before}.jsonl", outside)
    with outside.open("ab") as handle:
        handle.write(b'{"type": "mes')  # a torn last line, which a write cuts
    kept = outside.read_bytes()

    lsp = await start_server()
    listed = {s["sessionId"]: s for s in (await lsp.request(protocol.SESSION_LIST))["sessions"]}
    assert listed[before]["readOnly"] and not listed[after]["readOnly"]
    assert (await lsp.get(before))["session"]["readOnly"]
    assert not (await lsp.get(after))["session"]["readOnly"]
    os.link(folder / f"{after}.jsonl", tmp_path / "after.jsonl")  # while the server holds it
    kept_after = (tmp_path / "after.jsonl").read_bytes()
    for sid in (before, after):
        path = folder / f"{sid}.jsonl"
        error = await lsp.error(
            protocol.SESSION_APPEND, {"sessionId": sid, "messages": [user("x")]}
        )
        assert error.baton_code == "storage_error", error
        assert str(path) in error.message and "hard link" in error.message
    assert outside.read_bytes() == kept and not (folder / f"{before}.jsonl.torn").exists()
    assert (tmp_path / "after.jsonl").read_bytes() == kept_after
    assert (await lsp.get(after))["session"]["readOnly"]


async def test_a_side_file_with_a_second_name_is_never_written(
    start_server: Starter, tmp_path: Path
) -> None:
    """The copy of a torn last line (`<id>.jsonl.torn`), hard-linked beforehand to a file
    outside the data dir, was appended to, so the repair wrote outside it: it is refused
    now (`storage_error` naming it), nothing cut and nothing written."""
    lsp = await start_server()
    sid = (await lsp.create(title="torn"))["sessionId"]
    await lsp.append(sid, *conversation(1))
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    with path.open("ab") as handle:
        handle.write(b'{"type": "mes')
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    os.link(outside, path.with_suffix(".jsonl.torn"))
    held = path.read_bytes()

    error = await lsp.error(protocol.SESSION_APPEND, {"sessionId": sid, "messages": [user("x")]})

    assert error.baton_code == "storage_error"
    assert f"{path}.torn" in error.message and "hard link" in error.message
    assert outside.read_text() == "kept\n" and path.read_bytes() == held


async def test_a_sessions_folder_that_is_a_link_is_never_followed(
    start_server: Starter, tmp_path: Path
) -> None:
    """`<dataDir>/sessions` a link to a folder elsewhere was followed: a create made that
    folder private (0700: a link to a shared folder, or to /tmp, took it from everyone
    else) and wrote its transcripts there. Baton follows no link inside its data dir: the
    start names the link in one warning, nothing is read or written through it (a create
    or a get answers `storage_error` naming it). The data dir itself may be a link."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    elsewhere.chmod(0o755)
    (elsewhere / "s_there.jsonl").write_text('{"type": "session", "format": 1}\n')
    data_dir = tmp_path / "linked-data"
    data_dir.mkdir()
    (data_dir / "sessions").symlink_to(elsewhere)
    lsp = await start_server(env={"BATON_DATA_DIR": str(data_dir)})

    warnings = await lsp.recorder.wait_for(
        lambda: [
            p
            for p in lsp.recorder.of(types.WINDOW_LOG_MESSAGE)
            if p.type == types.MessageType.Warning and str(data_dir) in p.message
        ]
    )
    assert len(warnings) == 1 and "symbolic link" in warnings[0].message
    assert (await lsp.request(protocol.SESSION_LIST))["sessions"] == []
    for method, params in (
        (protocol.SESSION_CREATE, {"title": "new chat"}),
        (protocol.SESSION_GET, {"sessionId": "s_there"}),
    ):
        error = await lsp.error(method, params)
        assert error.baton_code == "storage_error"
        assert str(data_dir / "sessions") in error.message and "symbolic link" in error.message
    assert (elsewhere.stat().st_mode & 0o777, os.listdir(elsewhere)) == (0o755, ["s_there.jsonl"])
    await lsp.close()

    (tmp_path / "real-data").mkdir()
    (tmp_path / "data-link").symlink_to(tmp_path / "real-data")
    lsp = await start_server(env={"BATON_DATA_DIR": str(tmp_path / "data-link")})
    sid = (await lsp.create(title="through the data dir's own link"))["sessionId"]
    await lsp.append(sid, *conversation(1))
    assert (tmp_path / "real-data" / "sessions" / f"{sid}.jsonl").is_file()


async def test_a_sessions_folder_made_a_link_while_the_server_runs_is_not_written_through(
    start_server: Starter, tmp_path: Path
) -> None:
    """The sessions folder moved out of the data dir and a link to it put in its place,
    while the server held a session: its next append wrote through the link, into the
    file now outside the data dir (the file was the one it held), and so did a preview's
    draft beside it. Both answer `storage_error` naming the link, nothing written, as a
    session not held does."""
    lsp = await start_server()
    sid = (await lsp.create(title="held"))["sessionId"]
    await lsp.append(sid, *conversation(40))
    folder = lsp.data_dir / "sessions"
    folder.rename(tmp_path / "elsewhere")
    folder.symlink_to(tmp_path / "elsewhere")
    outside = tmp_path / "elsewhere" / f"{sid}.jsonl"
    before = outside.read_bytes()

    for method, params in (
        (protocol.COMPACT_PREVIEW, {"sessionId": sid}),
        (protocol.SESSION_APPEND, {"sessionId": sid, "messages": [user("x")]}),
    ):
        error = await lsp.error(method, params)
        assert error.baton_code == "storage_error"
        assert str(folder) in error.message and "symbolic link" in error.message
    assert outside.read_bytes() == before
    assert os.listdir(tmp_path / "elsewhere") == [outside.name]
