"""workDoneProgress during compaction: begin/report/end, client tokens, cancel, no support."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import attrs
from lsp_harness import WAIT_SECONDS, Harness, conversation, spawn_stdio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities
from test_server_malformed import RawPipe

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

REQUEST_CANCELLED = -32800


def progress_of(lsp: Harness, token: Any = None, after: int = 0) -> list[dict[str, Any]]:
    return [
        p.value
        for m, p in lsp.recorder.received[after:]
        if m == types.PROGRESS and (token is None or p.token == token)
    ]


async def test_compaction_reports_begin_reports_and_end(any_lsp: Harness) -> None:
    sid = (await any_lsp.create())["sessionId"]
    ids = (await any_lsp.append(sid, *conversation(4)))["messageIds"]
    mark = any_lsp.recorder.mark()
    await any_lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    values = progress_of(any_lsp, after=mark)
    assert values[0]["kind"] == "begin"
    assert values[0]["cancellable"] is True
    assert values[-1]["kind"] == "end"
    assert values[-1]["message"] == "Summarized 4 messages"
    reports = [v for v in values if v["kind"] == "report"]
    by_message = {v["message"]: v.get("percentage") for v in reports}
    assert isinstance(by_message["Summarizing 4 messages"], int)  # with a percentage
    assert isinstance(by_message["Restoring 0 files"], int)
    percentages = [v["percentage"] for v in reports if "percentage" in v]
    assert percentages == sorted(percentages)
    tokens = {p.token for m, p in any_lsp.recorder.received[mark:] if m == types.PROGRESS}
    assert len(tokens) == 1
    assert tokens <= set(any_lsp.client.progress_reports)  # created by the server first


async def test_a_client_token_carries_the_progress(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    lsp.client.progress_reports.setdefault("mine", [])  # the client made this token
    mark = lsp.recorder.mark()
    await lsp.request(
        protocol.COMPACT,
        {
            "sessionId": sid,
            "direction": "up_to",
            "pivotMessageId": ids[1],
            "workDoneToken": "mine",
        },
    )
    values = progress_of(lsp, "mine", after=mark)
    assert values[0]["kind"] == "begin" and values[-1]["kind"] == "end"
    assert progress_of(lsp, after=mark) == values  # no other token was used


async def test_a_command_with_a_client_token_reports_on_it_and_creates_none(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    lsp.client.progress_reports.setdefault(7, [])  # the client made this (integer) token
    created_before = set(lsp.client.progress_reports)
    mark = lsp.recorder.mark()
    result = await lsp.request(
        types.WORKSPACE_EXECUTE_COMMAND,
        {
            "command": protocol.CMD_COMPACT_UP_TO,
            "arguments": [{"sessionId": sid, "pivotMessageId": ids[1]}],
            "workDoneToken": 7,
        },
    )
    assert result["summarizedMessageIds"] == ids[:2]
    values = progress_of(lsp, 7, after=mark)
    assert values[0] == {
        "kind": "begin",
        "title": "Baton: compacting",
        "cancellable": True,
        "percentage": 0,
    }
    assert "Summarizing 2 messages" in [v.get("message") for v in values]
    assert values[-1] == {"kind": "end", "message": "Summarized 2 messages"}
    assert progress_of(lsp, after=mark) == values  # no other token was used
    assert set(lsp.client.progress_reports) == created_before  # and none was created

    lsp.client.progress_reports.setdefault("preview-1", [])
    mark = lsp.recorder.mark()
    await lsp.request(
        types.WORKSPACE_EXECUTE_COMMAND,
        {
            "command": protocol.CMD_PREVIEW_COMPACT,
            "arguments": [{"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}],
            "workDoneToken": "preview-1",
        },
    )
    values = progress_of(lsp, "preview-1", after=mark)
    assert values[0]["title"] == "Baton: planning a compaction"
    # the view is now the summary, ids[2], ids[3], ...: three messages up to ids[3]
    assert values[-1] == {"kind": "end", "message": "3 messages would be summarized"}


async def test_a_client_without_progress_support_gets_none(start_server) -> None:
    capabilities = client_capabilities("visual_studio_code")
    capabilities = attrs.evolve(
        capabilities, window=attrs.evolve(capabilities.window, work_done_progress=False)
    )
    lsp = await start_server(capabilities=capabilities)
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    result = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[1]})
    assert result["summarizedMessageIds"] == ids[:2]
    assert progress_of(lsp) == []


async def test_the_progress_cancel_button_cancels_the_compaction(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options={"anthropicApiKey": "sk-ant-test-progress-cancel"})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    before = await lsp.render(sid)
    gate = threading.Event()
    script = fake_anthropic.reply("<summary>never</summary>", hold_after=3, gate=gate)
    mark = lsp.recorder.mark()
    params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[1]}
    request = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.COMPACT, params)
    )
    try:
        begin = await lsp.progress_begin(after=mark)
        assert await asyncio.to_thread(script.held.wait, 20)
        lsp.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=begin.token)
        )
        try:
            await request
            raise AssertionError("the compaction finished despite the cancel")
        except JsonRpcException as exc:
            assert exc.code == REQUEST_CANCELLED
    finally:
        gate.set()
    end = await lsp.progress_end(begin.token)
    assert end.token == begin.token  # the progress ends even when cancelled
    assert await lsp.render(sid) == before


async def test_a_compaction_cancelled_before_its_progress_is_created_logs_no_traceback(
    tmp_path: Path,
) -> None:
    """A compaction cancelled at once, while the client had not yet answered the server's
    `window/workDoneProgress/create`, left that request withdrawn: the client's answer,
    when it came, was set on the withdrawn request and logged an InvalidStateError with
    its traceback as an error."""
    process = await spawn_stdio(tmp_path / "data")
    raw = RawPipe(process)
    start = {"capabilities": {"window": {"workDoneProgress": True}}}
    try:
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": start})
        await raw.response(1)
        await raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        await raw.send(rpc(2, protocol.SESSION_CREATE, {}))
        sid = (await raw.response(2))["result"]["sessionId"]
        append = {"sessionId": sid, "messages": conversation(30)}
        await raw.send(rpc(3, protocol.SESSION_APPEND, append))
        await raw.response(3)
        await raw.send(rpc(4, protocol.COMPACT, {"sessionId": sid}))
        create = await raw.receive()
        while create.get("method") != types.WINDOW_WORK_DONE_PROGRESS_CREATE:
            create = await raw.receive()
        await raw.send({"jsonrpc": "2.0", "method": types.CANCEL_REQUEST, "params": {"id": 4}})
        assert (await raw.response(4))["error"]["code"] == REQUEST_CANCELLED
        await raw.send({"jsonrpc": "2.0", "id": create["id"], "result": None})  # late
        await raw.send(rpc(5, protocol.SESSION_GET, {"sessionId": sid}))
        view = (await raw.response(5))["result"]
        await raw.send({"jsonrpc": "2.0", "id": 6, "method": "shutdown"})
        await raw.response(6)
        await raw.send({"jsonrpc": "2.0", "method": "exit"})
        code = await asyncio.wait_for(process.wait(), WAIT_SECONDS)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert process.stderr is not None
    told = (await process.stderr.read()).decode()
    assert "Traceback" not in told and "ERROR" not in told, told[-2000:]
    assert code == 0
    assert view["session"]["compactions"] == 0  # the cancelled compaction changed nothing


def rpc(msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
