"""Stated limits and bad envelopes over a raw pipe: every request with a usable id answered,
no answer carrying a traceback or a server path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_server_malformed import INVALID_PARAMS, INVALID_REQUEST, RawPipe

from baton import protocol
from baton.lsp.transport.message_body import MAX_DEPTH

SERVER_FILES = str(Path(protocol.__file__).parent)


def clean(answer: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(answer)
    assert "Traceback" not in text and "traceback" not in text
    assert SERVER_FILES not in text and ".py" not in text
    return answer


def nested(depth: int) -> str:
    """JSON text `depth` arrays and objects deep (json.dumps itself stops near 1,000)."""
    opening = "".join('{"k": ' if n % 2 else "[" for n in range(depth))
    closing = "".join("}" if n % 2 else "]" for n in reversed(range(depth)))
    return opening + '"leaf"' + closing


async def send_text(pipe: RawPipe, text: str) -> None:
    await pipe.send_bytes(text.encode())


def append_with_input(msg_id: int, sid: str, depth: int) -> str:
    call = {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {"x": "@"}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [call]}]
    params = {"sessionId": sid, "messages": messages}
    text = json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": protocol.SESSION_APPEND, "params": params}
    )
    return text.replace('"@"', nested(depth))


async def session(pipe: RawPipe) -> str:
    await pipe.send(
        {"jsonrpc": "2.0", "id": "c", "method": protocol.SESSION_CREATE, "params": {"title": "t"}}
    )
    return str((await pipe.response("c"))["result"]["sessionId"])


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500, 900, 2000, 5000])
async def test_deep_tool_input_is_invalid_params(pipe: RawPipe, depth: int) -> None:
    sid = await session(pipe)
    await send_text(pipe, append_with_input(1, sid, depth))
    error = clean(await pipe.response(1))["error"]
    assert error["code"] == INVALID_PARAMS
    assert error["data"]["code"] == "invalid_params"
    assert str(MAX_DEPTH) in error["message"]


async def test_shallow_enough_tool_input_is_accepted(pipe: RawPipe) -> None:
    sid = await session(pipe)
    await send_text(pipe, append_with_input(1, sid, 40))
    assert "result" in clean(await pipe.response(1))


@pytest.mark.parametrize("path", ["/" + "a" * 20000, "x\x00y.jsonl", "a/" * 3000])
async def test_unreadable_import_paths_are_invalid_params(pipe: RawPipe, path: str) -> None:
    await pipe.send(
        {"jsonrpc": "2.0", "id": 2, "method": protocol.SESSION_IMPORT, "params": {"path": path}}
    )
    error = clean(await pipe.response(2))["error"]
    assert error["code"] == INVALID_PARAMS
    assert len(error["message"]) < 500


@pytest.mark.parametrize("bad_id", [[1], {"a": 1}, [], {}, True, 1.5])
async def test_an_unusable_id_is_an_invalid_request(pipe: RawPipe, bad_id: Any) -> None:
    await pipe.send({"jsonrpc": "2.0", "id": bad_id, "method": protocol.SESSION_LIST, "params": {}})
    error = clean(await pipe.response(None))["error"]
    assert error["code"] == INVALID_REQUEST
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": protocol.SESSION_LIST, "params": {}})
    assert "result" in await pipe.response(3)


async def test_a_deeply_nested_id_is_an_invalid_request(pipe: RawPipe) -> None:
    body = '{"jsonrpc": "2.0", "id": @, "method": "baton/session/list", "params": {}}'
    await send_text(pipe, body.replace("@", nested(3000)))
    error = clean(await pipe.response(None))["error"]
    assert error["code"] == INVALID_REQUEST
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": protocol.SESSION_LIST, "params": {}})
    assert "result" in await pipe.response(3)


@pytest.mark.parametrize("version", ["1.0", 2, None, 2.0, "2.0 "])
async def test_a_wrong_jsonrpc_version_is_answered(pipe: RawPipe, version: Any) -> None:
    await pipe.send({"jsonrpc": version, "id": 4, "method": protocol.SESSION_LIST, "params": {}})
    error = clean(await pipe.response(4))["error"]
    assert error["code"] == INVALID_REQUEST
    assert "2.0" in error["message"]


@pytest.mark.parametrize("method", [5, None, ["baton/session/list"], {"m": 1}])
async def test_a_method_that_is_no_string_is_an_invalid_request(pipe: RawPipe, method: Any) -> None:
    await pipe.send({"jsonrpc": "2.0", "id": 5, "method": method, "params": {}})
    assert clean(await pipe.response(5))["error"]["code"] == INVALID_REQUEST


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_in_an_append_are_invalid_params(
    pipe: RawPipe, constant: str
) -> None:
    sid = await session(pipe)
    await send_text(pipe, append_with_input(1, sid, 1).replace('"leaf"', constant))
    error = clean(await pipe.response(1))["error"]
    assert error["code"] == INVALID_PARAMS
    assert error["data"]["code"] == "invalid_params"
    assert constant.lstrip("-") in error["message"] and "not JSON" in error["message"]

    await pipe.send(
        {"jsonrpc": "2.0", "id": 2, "method": protocol.SESSION_GET, "params": {"sessionId": sid}}
    )
    assert (await pipe.response(2))["result"]["messages"] == []  # nothing was stored


async def test_nan_as_a_string_is_text_like_any_other(pipe: RawPipe) -> None:
    sid = await session(pipe)
    await send_text(pipe, append_with_input(1, sid, 1).replace('"leaf"', '"NaN"'))
    assert "result" in clean(await pipe.response(1))
