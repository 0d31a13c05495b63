"""R5: a data dir that other programs touch, over a real server (issue 26).

Odd names in `sessions/` (a FIFO, a link to /dev/zero, a directory) are listed as damaged
and the server keeps answering; a data dir Baton cannot use is named, with its cause, in
one line on stderr and a warning the client shows, and a create there fails with
`storage_error` naming the path; files that swapped names answer by their names; a
transcript replaced by a safe-save while the server holds it loses nothing acknowledged.
Seeded (BATON_SEED)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsp_harness import Harness, conversation, spawn_stdio, user
from lsprotocol import types
from test_server_malformed import RawPipe

from baton import protocol

SEED = int(os.environ.get("BATON_SEED", "20261201"))
Starter = Callable[..., Awaitable[Harness]]  # the `start_server` fixture (tests/lsp/conftest)


@pytest.mark.timeout(120)  # the old server never answered a list with a FIFO in it
async def test_odd_names_in_sessions_are_listed_as_damaged_and_the_server_answers(
    start_server: Starter,
) -> None:
    lsp = await start_server()
    sid = (await lsp.create(title="healthy"))["sessionId"]
    await lsp.append(sid, *conversation(1))
    folder = lsp.data_dir / "sessions"
    os.mkfifo(folder / "s_fifo.jsonl")
    (folder / "s_zero.jsonl").symlink_to("/dev/zero")
    (folder / "s_dir.jsonl").mkdir()

    listed = {s["sessionId"]: s for s in (await lsp.request(protocol.SESSION_LIST))["sessions"]}

    assert set(listed) == {sid, "s_fifo", "s_zero", "s_dir"}
    assert "damaged" not in listed[sid]
    for odd in ("s_fifo", "s_zero", "s_dir"):
        assert listed[odd]["readOnly"] and listed[odd]["damaged"]["problems"]
        error = await lsp.error(protocol.SESSION_GET, {"sessionId": odd})
        assert error.baton_code == "storage_error" and odd in error.message
    other = (await lsp.create(title="still answering"))["sessionId"]
    await lsp.append(other, *conversation(1))
    assert len((await lsp.request(protocol.SESSION_LIST))["sessions"]) == 5


async def test_a_data_dir_that_cannot_be_used_is_named_at_start_and_in_errors(
    start_server: Starter, tmp_path: Path
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data dir's parent should be")
    data_dir = blocker / "data"
    lsp = await start_server(env={"BATON_DATA_DIR": str(data_dir)})

    warnings = await lsp.recorder.wait_for(
        lambda: [
            p
            for p in lsp.recorder.of(types.WINDOW_LOG_MESSAGE)
            if p.type == types.MessageType.Warning and str(data_dir) in p.message
        ]
    )
    assert len(warnings) == 1 and "not a directory" in warnings[0].message
    error = await lsp.error(protocol.SESSION_CREATE, {"title": "new chat"})
    assert error.baton_code == "storage_error"
    assert str(blocker) in error.message and "Not a directory" in error.message
    assert (await lsp.request(protocol.SESSION_LIST))["sessions"] == []


async def test_the_start_says_in_one_stderr_line_what_the_data_dir_does_not_allow(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    process = await spawn_stdio(blocker / "data")
    pipe = RawPipe(process)
    await pipe.send(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    )
    await pipe.response(1)
    await pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    await pipe.send({"jsonrpc": "2.0", "id": 2, "method": "baton/session/list", "params": {}})
    await pipe.response(2)
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    await pipe.response(3)
    await pipe.send({"jsonrpc": "2.0", "method": "exit"})
    assert process.stderr is not None
    stderr = (await asyncio.wait_for(process.stderr.read(), 60)).decode()
    await process.wait()
    lines = [line for line in stderr.splitlines() if str(blocker / "data") in line]
    assert len(lines) == 1 and "not a directory" in lines[0], stderr


async def test_swapped_files_answer_by_their_names(start_server: Starter) -> None:
    rng = random.Random(SEED)
    lsp = await start_server()
    a = (await lsp.create(title="A"))["sessionId"]
    b = (await lsp.create(title="B"))["sessionId"]
    await lsp.append(a, *conversation(rng.randint(1, 3)))
    await lsp.append(b, *conversation(rng.randint(1, 3)))
    await lsp.close()
    folder = lsp.data_dir / "sessions"
    pa, pb = folder / f"{a}.jsonl", folder / f"{b}.jsonl"
    pa.rename(folder / "swap")
    pb.rename(pa)
    (folder / "swap").rename(pb)
    shutil.copyfile(pa, folder / "s_copy.jsonl")

    lsp = await start_server()
    got = await lsp.get(a)
    assert got["session"]["sessionId"] == a and got["session"]["readOnly"]
    assert any(b in p for p in got["session"]["damaged"]["problems"])
    listed = [s["sessionId"] for s in (await lsp.request(protocol.SESSION_LIST))["sessions"]]
    assert sorted(listed) == sorted([a, b, "s_copy"])
    error = await lsp.error(protocol.SESSION_APPEND, {"sessionId": a, "messages": [user("x")]})
    assert error.baton_code == "session_locked"


async def test_a_safe_save_under_the_server_loses_nothing_acknowledged(
    start_server: Starter,
) -> None:
    rng = random.Random(SEED + 1)
    lsp = await start_server()
    sid = (await lsp.create(title="saved"))["sessionId"]
    acknowledged = []
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    for turn in range(6):
        messages = conversation(1, words=rng.randint(5, 40))
        acknowledged += (await lsp.append(sid, *messages))["messageIds"]
        if turn % 2 == 0:  # a sync tool's `cp f f.tmp; mv f.tmp f`
            shutil.copyfile(path, path.with_suffix(".tmp"))
            path.with_suffix(".tmp").rename(path)
    await lsp.close()

    lsp = await start_server()
    assert [m["id"] for m in (await lsp.get(sid))["messages"]] == acknowledged


async def test_a_change_another_program_made_is_told_once_a_write_finds_it(
    start_server: Starter,
) -> None:
    """A pin after another program dropped the last turn (a safe-save of a shorter copy)
    failed with `transcript_changed` and read the session again, but nothing told it: the
    meter, the document's version and its diagnostics kept the turn that was gone."""
    lsp = await start_server()
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    before = await lsp.request(protocol.USAGE, {"sessionId": sid})
    version = (await lsp.render(sid))["version"]
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.with_suffix(".tmp").write_text("".join(lines[:-2]))
    path.with_suffix(".tmp").rename(path)
    mark = lsp.recorder.mark()

    pin = {"sessionId": sid, "messageId": ids[0], "pinned": True}
    assert (await lsp.error(protocol.SESSION_PIN, pin)).baton_code == "transcript_changed"

    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["usedTokens"] < before["usedTokens"]
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED,
        lambda p: p["sessionId"] == sid and p["reason"] == "reload",
        after=mark,
    )
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED,
        lambda p: p["sessionId"] == sid and p["usage"]["usedTokens"] == usage["usedTokens"],
        after=mark,
    )
    doc = await lsp.render(sid)
    assert doc["version"] > version
    assert [m["messageId"] for m in doc["messages"]] == ids[:-2]
    published = await lsp.diagnostics(sid, lambda p: p.version == doc["version"])
    headline = next(d for d in published.diagnostics if d.code == "context-usage").message
    assert headline == usage["text"]["headline"]


async def test_a_session_whose_file_went_away_is_told_as_deleted(start_server: Starter) -> None:
    """Another program moved an open session's transcript out of the data dir: a write
    found it gone (`transcript_changed`), the next look answered `session_not_found` and the
    server forgot the session, but told nobody, so the client kept its document's
    diagnostics (the meter of a session that no longer exists) and never heard it was gone."""
    lsp = await start_server()
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(2)))["messageIds"]
    await lsp.latest_diagnostics(sid)
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    path.rename(lsp.data_dir / "moved-away.jsonl")
    pin = {"sessionId": sid, "messageId": ids[0], "pinned": True}
    assert (await lsp.error(protocol.SESSION_PIN, pin)).baton_code == "transcript_changed"
    mark = lsp.recorder.mark()

    error = await lsp.error(protocol.SESSION_GET, {"sessionId": sid})

    assert error.baton_code == "session_not_found"
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED,
        lambda p: p["sessionId"] == sid and p["reason"] == "delete",
        after=mark,
    )
    cleared = await lsp.recorder.notification(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda p: p.uri == protocol.session_uri(sid),
        after=mark,
    )
    assert list(cleared.diagnostics) == []
    listed = await lsp.request(protocol.SESSION_LIST)
    assert sid not in [s["sessionId"] for s in listed["sessions"]]


async def test_a_get_that_finds_another_servers_compaction_tells_it(
    start_server: Starter,
) -> None:
    """A client that only gets a session another server writes (and reads the meter from
    its diagnostics) got the compacted view, but nothing told the change: no `reload`, no
    usage notification, and the diagnostics kept the figure from before the compaction.
    A render told it; a get did not."""
    writer = await start_server()
    sid = (await writer.create())["sessionId"]
    ids = (await writer.append(sid, *conversation(3)))["messageIds"]
    viewer = await start_server()
    first = await viewer.get(sid)
    await viewer.diagnostics(sid)  # the first look's meter
    mark = viewer.recorder.mark()
    await writer.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    )

    seen = await viewer.get(sid)
    assert seen["messages"] != first["messages"]
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload"
    )
    told = await viewer.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["sessionId"] == sid, after=mark
    )
    assert told["usage"]["usedTokens"] == seen["usage"]["usedTokens"]
    published = await viewer.diagnostics(sid, lambda p: p.version > 1)
    headline = next(d for d in published.diagnostics if d.code == "context-usage").message
    assert headline == seen["usage"]["text"]["headline"]
    await viewer.get(sid)  # nothing new: nothing told again
    assert len(viewer.recorder.of(protocol.SESSION_CHANGED)) == 1


async def test_a_transcript_saved_over_itself_in_place_is_read_again_before_a_write(
    start_server: Starter,
) -> None:
    """Another program that rewrote an open transcript in place at the same size (an
    editor that saves over the file, a word fixed) went unseen: the check before a write
    looked at the file's identity and size only, so the write was acknowledged after lines
    the session never read, which kept showing the old ones. The file's mtime is checked
    too: the write answers `transcript_changed`, and the session is read again."""
    lsp = await start_server()
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, user("the word is alpha"), *conversation(1)))["messageIds"]
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    data, st = path.read_bytes(), path.stat()
    with path.open("r+b") as handle:  # in place: the same file, the same size
        handle.write(data.replace(b"alpha", b"omega"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # saved a second on

    pin = {"sessionId": sid, "messageId": ids[0], "pinned": True}
    assert (await lsp.error(protocol.SESSION_PIN, pin)).baton_code == "transcript_changed"

    first = json.dumps((await lsp.get(sid))["messages"][0])
    assert "omega" in first and "alpha" not in first
    await lsp.request(protocol.SESSION_PIN, pin)


async def test_a_read_only_view_leaves_the_writers_draft_as_it_is(start_server: Starter) -> None:
    """A second server (or `baton compact --discard-draft`) that sees a session another
    server holds for writing, read-only, discarded that server's draft: the draft's file
    was removed, and the writer's apply then answered `draft_not_found`; a preview there
    with the draft's id and an edited summary wrote its own draft over it. Both refuse
    with `session_locked` and the writer's draft stays as it was."""
    writer = await start_server()
    sid = (await writer.create(title="drafted"))["sessionId"]
    ids = (await writer.append(sid, *conversation(30)))["messageIds"]
    draft = await writer.request(
        protocol.COMPACT_PREVIEW, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[9]}
    )
    path = writer.data_dir / "sessions" / f"{sid}.draft.json"
    kept = path.read_bytes()
    viewer = await start_server()
    assert (await viewer.get(sid))["session"]["readOnly"]

    params = {"sessionId": sid, "draftId": draft["draftId"]}
    for method, extra in (
        (protocol.COMPACT_DISCARD_DRAFT, {}),
        (protocol.COMPACT_PREVIEW, {"summary": "Edited elsewhere: nothing was said."}),
    ):
        error = await viewer.error(method, {**params, **extra})
        assert error.data["code"] == "session_locked", method
        assert "open for writing in another Baton process" in error.message
        assert path.read_bytes() == kept

    result = await writer.request(protocol.COMPACT_APPLY_DRAFT, params)
    assert result["summary"] == draft["summary"]


async def test_a_send_to_a_session_another_server_writes_says_so_first(
    start_server: Starter,
) -> None:
    """A send from a second server with no API key, to a session another Baton process
    holds for writing, answered `api_key_missing`: the user set a key (the editor restarts
    the server for it) only to be told then that the session is read-only there. The
    session being read-only is said first, as for every other change of it."""
    writer = await start_server()
    sid = (await writer.create(title="held"))["sessionId"]
    await writer.append(sid, *conversation(1))
    viewer = await start_server()
    error = await viewer.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "hi"})
    assert error.data["code"] == "session_locked"
    assert "open for writing in another Baton process" in error.message
