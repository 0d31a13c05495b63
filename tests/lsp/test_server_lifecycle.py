"""The LSP lifecycle over a raw pipe: what comes before `initialize`, a second `initialize`,
what comes after `shutdown`, and the exit code `exit` leaves."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import WAIT_SECONDS, conversation, spawn_stdio
from test_server_malformed import INVALID_REQUEST, RawPipe

from baton import protocol

SERVER_NOT_INITIALIZED = -32002
LIST = {"jsonrpc": "2.0", "method": "baton/session/list", "params": {}}
SHUTDOWN = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
INITIALIZED = {"jsonrpc": "2.0", "method": "initialized", "params": {}}


@pytest_asyncio.fixture
async def raw(tmp_path: Path) -> AsyncIterator[RawPipe]:
    """A server over a raw pipe, not initialized."""
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    try:
        yield RawPipe(process)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def initialize(msg_id: int, **options: object) -> dict[str, object]:
    params = {"capabilities": {}, "initializationOptions": options or None}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


def framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def exit_code(raw: RawPipe) -> int:
    await raw.send({"jsonrpc": "2.0", "method": "exit"})
    return await asyncio.wait_for(raw.process.wait(), WAIT_SECONDS)


async def test_a_request_before_initialize_is_refused_and_changes_nothing(raw: RawPipe) -> None:
    create = {"jsonrpc": "2.0", "id": "early", "method": "baton/session/create", "params": {}}
    await raw.send(create)
    early = await raw.response("early")
    assert early["error"]["code"] == SERVER_NOT_INITIALIZED
    assert "initialize" in early["error"]["message"]
    await raw.send({"jsonrpc": "2.0", "method": "baton/activeEditor", "params": {}})  # dropped

    await raw.send(initialize(1))
    assert "capabilities" in (await raw.response(1))["result"]
    await raw.send({**LIST, "id": 2})
    assert (await raw.response(2))["result"] == {"sessions": []}  # the early create made none
    await raw.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    await raw.response(3)
    assert await exit_code(raw) == 0


async def test_a_second_initialize_is_refused_and_keeps_the_first_ones_settings(
    raw: RawPipe, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    await raw.send(initialize(1, dataDir=str(first)))
    await raw.response(1)
    await raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    await raw.send(initialize(2, dataDir=str(second)))
    again = await raw.response(2)
    assert again["error"]["code"] == INVALID_REQUEST
    assert "initialize" in again["error"]["message"]

    await raw.send({**LIST, "method": "baton/session/create", "id": 3})
    sid = (await raw.response(3))["result"]["sessionId"]
    assert (first / "sessions" / f"{sid}.jsonl").exists()
    assert not second.exists()


async def test_a_request_after_shutdown_is_answered_invalid_request(raw: RawPipe) -> None:
    await raw.send(initialize(1))
    await raw.response(1)
    await raw.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert (await raw.response(2))["result"] is None
    for n, method in enumerate(("baton/session/list", "shutdown", "initialize"), start=3):
        await raw.send({**LIST, "method": method, "id": n})
        refused = await raw.response(n)
        assert refused["error"]["code"] == INVALID_REQUEST, method
        assert "shut down" in refused["error"]["message"]
    assert await exit_code(raw) == 0


async def test_exit_after_shutdown_exits_with_code_0(raw: RawPipe) -> None:
    await raw.send(initialize(1))
    await raw.response(1)
    await raw.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert (await raw.response(2))["result"] is None
    assert await exit_code(raw) == 0


async def test_exit_sent_with_shutdown_waits_for_its_answer_and_exits_with_code_0(
    tmp_path: Path,
) -> None:
    """`shutdown` and `exit` written at once, without waiting for the answer: the server
    took `exit` before it had answered `shutdown`, exited with code 1 and printed a
    CancelledError traceback on stderr."""
    process = await spawn_stdio(tmp_path / "data")
    raw = RawPipe(process)
    try:
        await raw.send(initialize(1))
        await raw.response(1)
        await raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        assert process.stdin is not None
        process.stdin.write(framed(SHUTDOWN) + framed({"jsonrpc": "2.0", "method": "exit"}))
        await process.stdin.drain()  # one write: the server reads both at once
        assert (await raw.response(2))["result"] is None
        code = await asyncio.wait_for(process.wait(), WAIT_SECONDS)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert process.stderr is not None
    told = (await process.stderr.read()).decode()
    assert "Traceback" not in told, told[-2000:]
    assert code == 0, told[-2000:]


async def test_a_request_sent_with_shutdown_is_answered_invalid_request(tmp_path: Path) -> None:
    """A second `shutdown` written right behind the first: taken while the first ran, it
    was cancelled by it, which failed on the requests it went through, so that the first
    was answered with an internal error (-32603) and `exit` left code 1."""
    process = await spawn_stdio(tmp_path / "data", stderr=asyncio.subprocess.DEVNULL)
    raw = RawPipe(process)
    try:
        await raw.send(initialize(1))
        await raw.response(1)
        assert process.stdin is not None
        again = {**SHUTDOWN, "id": 3}
        process.stdin.write(framed(SHUTDOWN) + framed(again) + framed(LIST | {"id": 4}))
        await process.stdin.drain()  # one write: the server reads them at once
        answers: dict[int, dict[str, object]] = {}
        while len(answers) < 3:  # in whatever order they come
            message = await raw.receive()
            if "method" not in message:
                answers[message["id"]] = message
        assert "result" in answers[2] and answers[2]["result"] is None, answers[2]
        for msg_id in (3, 4):
            refused = answers[msg_id]["error"]
            assert isinstance(refused, dict), answers[msg_id]
            assert refused["code"] == INVALID_REQUEST, refused
            assert "shut down" in refused["message"]
        assert await exit_code(raw) == 0
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


@pytest.mark.parametrize("end", ["exit", "SIGTERM"])
async def test_the_server_ended_while_it_waits_for_the_client_prints_no_traceback(
    end: str, tmp_path: Path
) -> None:
    """`initialized` waits for the client's answer to workspace/configuration: an `exit`
    (without shutdown) or a SIGTERM then printed the cut handler's CancelledError with a
    traceback on stderr."""
    process = await spawn_stdio(tmp_path / "data")
    raw = RawPipe(process)
    start = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    start["params"] = {"capabilities": {"workspace": {"configuration": True}}}
    try:
        assert process.stdin is not None
        process.stdin.write(framed(start) + framed(INITIALIZED))
        await process.stdin.drain()
        while (await raw.receive()).get("method") != "workspace/configuration":
            pass  # never answered
        if end == "exit":
            await raw.send({"jsonrpc": "2.0", "method": "exit"})
        else:
            process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), WAIT_SECONDS)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert process.stderr is not None
    told = (await process.stderr.read()).decode()
    assert "Traceback" not in told, told[-2000:]
    assert code == (1 if end == "exit" else 0), told[-2000:]


async def test_exit_without_shutdown_exits_with_code_1(raw: RawPipe) -> None:
    await raw.send(initialize(1))
    await raw.response(1)
    assert await exit_code(raw) == 1


LITERALS = {"codeActionKind": {"valueSet": ["source", "refactor.rewrite"]}}


@pytest.mark.parametrize(
    ("code_action", "provider"),
    [
        (None, True),
        ({"dynamicRegistration": False}, True),
        (
            {"codeActionLiteralSupport": LITERALS},
            {"codeActionKinds": ["source", "refactor.rewrite"]},
        ),
    ],
)
async def test_code_action_kinds_are_told_only_to_a_client_that_takes_literals(
    raw: RawPipe, code_action: dict[str, object] | None, provider: object
) -> None:
    """LSP: CodeActionOptions only for a client that declares codeActionLiteralSupport."""
    message = initialize(1)
    if code_action is not None:
        message["params"] = {"capabilities": {"textDocument": {"codeAction": code_action}}}
    await raw.send(message)
    assert (await raw.response(1))["result"]["capabilities"]["codeActionProvider"] == provider


async def test_a_second_initialized_is_dropped(raw: RawPipe) -> None:
    """`initialized` registers the configuration (under one id) and pulls it: a second one
    did both again, and a client refuses a registration id it already holds."""
    caps = {"workspace": {"didChangeConfiguration": {"dynamicRegistration": True}}}
    await raw.send(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": caps}}
    )
    await raw.response(1)
    registrations: list[dict[str, object]] = []

    async def until_answered(msg_id: int) -> None:
        """Read up to the answer to `msg_id`, answering the server's registrations."""
        while True:
            message = await raw.receive()
            if message.get("method") == "client/registerCapability":
                registrations.append(message)
                await raw.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" not in message and message.get("id") == msg_id:
                return

    await raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    await raw.send({**LIST, "id": 2})
    await until_answered(2)
    await raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    await raw.send({**LIST, "id": 3})
    await until_answered(3)
    await raw.send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
    await until_answered(4)  # whatever the notifications set going has been sent by now
    assert len(registrations) == 1
    assert await exit_code(raw) == 0


async def test_shutdown_and_exit_while_an_offline_compaction_runs_print_no_traceback(
    tmp_path: Path,
) -> None:
    """`shutdown` then `exit` while an offline compaction of a long session ran in its
    worker thread: `exit` closed the output, and the compaction's answer (cancelled, once
    the thread came to its next step) was written to it as the server ended, "ValueError:
    I/O operation on closed file" with its traceback, logged again and again as each
    report of it failed the same way. Nothing was lost: the transcript reads whole."""
    data_dir = tmp_path / "data"
    process = await spawn_stdio(data_dir)
    raw = RawPipe(process)
    told = asyncio.ensure_future(process.stderr.read())  # type: ignore[union-attr]
    try:
        await started(raw)
        sid, ids = await session_with(raw, 1_500)
        compact = {"sessionId": sid, "workDoneToken": "compacting"}
        await raw.send(request(4, protocol.COMPACT, compact))
        while (await raw.receive()).get("method") != "$/progress":
            pass  # the compaction has begun
        code = await shutdown_then_exit(raw)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    stderr = (await told).decode()
    assert "Traceback" not in stderr, stderr[-2000:]
    assert code == 0

    view = await read_back(data_dir, sid)
    assert "damaged" not in view["session"]
    if view["session"]["compactions"] == 0:  # cancelled before it committed
        assert [m["id"] for m in view["messages"]] == ids


def request(msg_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


async def started(raw: RawPipe) -> None:
    """`initialize`, answered, then `initialized`."""
    await raw.send(initialize(1))
    await raw.response(1)
    await raw.send(INITIALIZED)


async def session_with(raw: RawPipe, turns: int) -> tuple[str, list[str]]:
    """A new session holding `conversation(turns)` (requests 2 and 3): its id, the ids
    of its messages."""
    await raw.send(request(2, protocol.SESSION_CREATE, {}))
    sid: str = (await raw.response(2))["result"]["sessionId"]
    append = {"sessionId": sid, "messages": conversation(turns)}
    await raw.send(request(3, protocol.SESSION_APPEND, append))
    ids: list[str] = (await raw.response(3))["result"]["messageIds"]
    return sid, ids


async def shutdown_then_exit(raw: RawPipe) -> int:
    """`shutdown`, answered, then `exit`: the exit code."""
    await raw.send(SHUTDOWN)
    await raw.response(2)
    return await exit_code(raw)


async def read_back(data_dir: Path, sid: str) -> dict[str, Any]:
    """`sid`'s view as a fresh server reads it from `data_dir` (then ended by `exit`)."""
    again = await spawn_stdio(data_dir, stderr=asyncio.subprocess.DEVNULL)
    raw = RawPipe(again)
    try:
        await raw.send(initialize(1))
        await raw.response(1)
        await raw.send(request(2, protocol.SESSION_GET, {"sessionId": sid}))
        view: dict[str, Any] = (await raw.response(2))["result"]
        assert await exit_code(raw) == 1
    finally:
        if again.returncode is None:
            again.kill()
        await again.wait()
    return view


CANCELS = {"$/cancelRequest": "id", "window/workDoneProgress/cancel": "token"}


@pytest.mark.parametrize("method", list(CANCELS))
@pytest.mark.parametrize("odd", [[1], {"n": 1}, 1.5, True, None], ids=repr)
async def test_a_cancel_naming_no_request_id_is_dropped_without_a_traceback(
    tmp_path: Path, odd: object, method: str
) -> None:
    """$/cancelRequest whose id (window/workDoneProgress/cancel whose token) is a list or
    an object (JSON-RPC's ids and LSP's tokens are numbers and strings) was handed to
    pygls, which failed to look it up ("unhashable type: 'list'"), logged as an error with
    its traceback on stderr (the progress cancel's also told the client, in a log message
    of type Error). It is dropped with one line; the server serves on."""
    process = await spawn_stdio(tmp_path / "data")
    raw = RawPipe(process)
    told = asyncio.ensure_future(process.stderr.read())  # type: ignore[union-attr]
    try:
        await started(raw)
        params = {CANCELS[method]: odd}
        await raw.send({"jsonrpc": "2.0", "method": method, "params": params})
        await raw.send({**LIST, "id": 3})
        while (answer := await raw.receive()).get("id") != 3:
            assert answer.get("method") != "window/logMessage", answer
        assert answer["result"] == {"sessions": []}
        code = await shutdown_then_exit(raw)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    stderr = (await told).decode()
    assert "Traceback" not in stderr and " ERROR " not in stderr, stderr[-2000:]
    assert code == 0


async def test_a_shutdown_answered_holds_no_session_a_read_in_flight_opened(
    raw: RawPipe, start_server: Any
) -> None:
    """A session read (a get, in a worker thread) when `shutdown` came was opened, with
    its writer's lock, after the shutdown had let go of every session, and so held until
    the process ended: the editor, starting the next server as soon as `shutdown` was
    answered (a restart for a new API key), found the conversation "open for writing in
    another Baton process", read-only there until the window lost and got back the
    focus. Once `shutdown` is answered, the server holds no session."""
    maker = await start_server()
    sid = (await maker.create())["sessionId"]
    await maker.append(sid, *conversation(1500))  # its read takes a while
    await maker.close()
    await raw.send(initialize(1))
    await raw.response(1)
    get = {"jsonrpc": "2.0", "id": 2, "method": protocol.SESSION_GET}
    assert raw.process.stdin is not None
    raw.process.stdin.write(
        framed({**get, "params": {"sessionId": sid}}) + framed(SHUTDOWN | {"id": 3})
    )
    await raw.process.stdin.drain()  # one write: the read begins, and the shutdown at once
    assert (await raw.response(3))["result"] is None

    after = await start_server()  # while the first one has not exited yet
    seen = await after.get(sid)
    assert not seen["session"]["readOnly"]
    await after.append(sid, {"role": "user", "content": "written by the next server"})
    assert await exit_code(raw) == 0
