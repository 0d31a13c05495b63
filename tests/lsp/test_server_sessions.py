"""Session requests over stdio: create, list, get, delete, append, pin, import, usage."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import NEOVIM, Harness, assistant, conversation, user
from lsprotocol.types import TEXT_DOCUMENT_CODE_ACTION as CODE_ACTION

from baton import protocol
from baton_testkit.claude_code_gen import case

SESSION_KEYS = {"sessionId", "title", "model", "createdAt", "updatedAt", "uri", "compactions"}
USAGE_KEYS = {
    "sessionId",
    "model",
    "contextWindow",
    "effectiveWindow",
    "autoCompactThreshold",
    "warningThreshold",
    "errorThreshold",
    "blockingLimit",
    "usedTokens",
    "percentUsed",
    "percentLeft",
    "state",
    "estimated",
    "autoCompactEnabled",
    "autoCompactPaused",
    "breakdown",
}


async def test_create_list_get_delete_round_trip(any_lsp: Harness) -> None:
    created = await any_lsp.create(
        title="Refactor", systemPrompt="Be brief.", model="claude-opus-4-1"
    )
    assert created.keys() >= SESSION_KEYS
    sid = created["sessionId"]
    assert created["title"] == "Refactor"
    assert created["model"] == "claude-opus-4-1"
    assert created["uri"] == f"baton:/sessions/{sid}.md"
    assert created["compactions"] == 0

    listed = await any_lsp.request(protocol.SESSION_LIST, {})
    assert [s["sessionId"] for s in listed["sessions"]] == [sid]

    got = await any_lsp.get(sid)
    assert got["session"]["sessionId"] == sid
    assert got["messages"] == []
    assert got["usage"].keys() >= USAGE_KEYS
    assert got["usage"]["breakdown"]["system"] > 0  # the system prompt counts

    mark = any_lsp.recorder.mark()
    assert await any_lsp.request(protocol.SESSION_DELETE, {"sessionId": sid}) == {}
    changed = await any_lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid, after=mark
    )
    assert changed["reason"] == "delete"
    error = await any_lsp.error(protocol.SESSION_GET, {"sessionId": sid})
    assert error.baton_code == "session_not_found"
    assert (await any_lsp.request(protocol.SESSION_LIST))["sessions"] == []


async def test_append_returns_ids_and_usage_and_notifies(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    mark = lsp.recorder.mark()
    result = await lsp.append(sid, user("hello", id="u1"), assistant("hi there"))
    assert result["messageIds"][0] == "u1"
    assert len(result["messageIds"]) == 2
    assert result["repairs"] == []
    assert result["usage"]["usedTokens"] > 0
    assert result["usage"]["estimated"] is True

    changed = await lsp.recorder.notification(protocol.SESSION_CHANGED, after=mark)
    assert changed == {"sessionId": sid, "reason": "append"}
    usage = await lsp.recorder.notification(protocol.USAGE_CHANGED, after=mark)
    assert usage["sessionId"] == sid
    assert usage["usage"]["usedTokens"] == result["usage"]["usedTokens"]

    view = await lsp.get(sid)
    assert [m["id"] for m in view["messages"]] == result["messageIds"]
    assert view["messages"][1]["content"] == [{"type": "text", "text": "hi there"}]
    assert all(m["tokens"] > 0 for m in view["messages"])


async def test_append_repairs_unanswered_tool_calls_before_a_new_prompt(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}}
    await lsp.append(sid, user("read a.py"), {"role": "assistant", "content": [call]})
    result = await lsp.append(sid, user("never mind"))
    assert len(result["repairs"]) == 1
    assert "toolu_1" in result["repairs"][0]
    messages = (await lsp.get(sid))["messages"]
    repair = messages[2]["content"][0]
    assert repair["type"] == "tool_result"
    assert repair["tool_use_id"] == "toolu_1"
    assert repair["is_error"] is True


async def test_invalid_append_is_refused_and_writes_nothing(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, user("first", id="m1"))
    orphan = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope"}]}
    cases = [
        [user("ok"), orphan],  # a tool_result answering nothing (the valid one is not kept)
        [user("again", id="m1")],  # an id that exists
        [{"role": "system", "content": "x"}],  # an unknown role
        [{"role": "user", "content": [{"type": "text"}]}],  # a malformed block
        [],  # nothing
    ]
    for messages in cases:
        error = await lsp.error(protocol.SESSION_APPEND, {"sessionId": sid, "messages": messages})
        assert error.baton_code == "invalid_params", messages
        assert error.code == -32602
    assert [m["id"] for m in (await lsp.get(sid))["messages"]] == ["m1"]


async def test_pin_marks_the_message_and_changes_the_document(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, user("keep this", id="p1"), assistant("ok"))
    before = await lsp.render(sid)
    pinned = await lsp.request(
        protocol.SESSION_PIN, {"sessionId": sid, "messageId": "p1", "pinned": True}
    )
    assert pinned["id"] == "p1"
    assert pinned["pinned"] is True
    after = await lsp.render(sid)
    assert after["version"] > before["version"]
    heading = after["text"].splitlines()[after["messages"][0]["range"]["start"]["line"]]
    assert "pinned" in heading
    error = await lsp.error(
        protocol.SESSION_PIN, {"sessionId": sid, "messageId": "missing", "pinned": True}
    )
    assert error.baton_code == "message_not_found"


async def test_usage_reports_the_thresholds_of_a_200k_window(start_server) -> None:
    lsp = await start_server(options={"contextWindow": 200_000})
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(2))
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage.keys() >= USAGE_KEYS
    assert usage["contextWindow"] == 200_000
    assert usage["effectiveWindow"] == 180_000
    assert usage["autoCompactThreshold"] == 167_000
    assert usage["warningThreshold"] == 147_000
    assert usage["blockingLimit"] == 177_000
    assert usage["state"] == "ok"
    assert 0 < usage["percentUsed"] < 5
    assert usage["percentLeft"] == round(
        (usage["autoCompactThreshold"] - usage["usedTokens"]) / usage["autoCompactThreshold"] * 100
    )


async def test_import_of_a_claude_code_file_creates_a_session(lsp: Harness, tmp_path: Path) -> None:
    generated = case("recent-one-compaction")
    source = generated.write(tmp_path / "session.jsonl")
    imported = await lsp.request(
        protocol.SESSION_IMPORT, {"path": str(source), "format": "claude-code"}
    )
    assert imported.keys() >= SESSION_KEYS
    view = await lsp.get(imported["sessionId"])
    assert len(view["messages"]) == len(generated.truth.view)
    assert view["messages"][0]["role"] == "user"
    assert view["messages"][0]["kind"] == "summary"  # the file's compaction is the session's


async def test_import_refuses_missing_files_and_unknown_formats(
    lsp: Harness, tmp_path: Path
) -> None:
    missing = await lsp.error(protocol.SESSION_IMPORT, {"path": str(tmp_path / "nope.jsonl")})
    assert missing.baton_code == "invalid_params"
    wrong = await lsp.error(protocol.SESSION_IMPORT, {"path": str(tmp_path), "format": "chatgpt"})
    assert wrong.baton_code == "invalid_params"
    assert (await lsp.request(protocol.SESSION_LIST))["sessions"] == []


async def test_unknown_and_malformed_session_ids_are_told_apart(lsp: Harness) -> None:
    for method in (
        protocol.SESSION_GET,
        protocol.SESSION_RENDER,
        protocol.USAGE,
        protocol.SESSION_DELETE,
    ):
        unknown = await lsp.error(method, {"sessionId": "s_doesnotexist"})
        assert unknown.baton_code == "session_not_found", method
        bad = await lsp.error(method, {"sessionId": "../../etc/passwd"})
        assert bad.baton_code == "invalid_params", method
    unknown = await lsp.error(
        protocol.SESSION_APPEND, {"sessionId": "s_doesnotexist", "messages": [user("x")]}
    )
    assert unknown.baton_code == "session_not_found"


async def test_wrong_param_types_are_invalid_params(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    cases = [
        (protocol.SESSION_GET, {"sessionId": 42}),
        (protocol.SESSION_GET, {}),
        (protocol.SESSION_GET, [sid]),
        (protocol.SESSION_APPEND, {"sessionId": sid, "messages": "hello"}),
        (protocol.SESSION_PIN, {"sessionId": sid, "messageId": "m", "pinned": "yes please"}),
        (protocol.COMPACT, {"sessionId": sid, "direction": "sideways"}),
        (protocol.SESSION_CREATE, {"title": ["not", "a", "string"]}),
    ]
    for method, params in cases:
        error = await lsp.error(method, params)
        assert error.baton_code == "invalid_params", (method, params)
    assert (await lsp.get(sid))["messages"] == []


async def test_a_second_server_on_the_same_data_sees_the_session_read_only(
    lsp: Harness, start_server
) -> None:
    sid = (await lsp.create(title="shared"))["sessionId"]
    await lsp.append(sid, user("hello"))
    second = await start_server()
    view = await second.get(sid)
    assert view["session"]["readOnly"] is True
    assert [m["role"] for m in view["messages"]] == ["user"]
    error = await second.error(protocol.SESSION_APPEND, {"sessionId": sid, "messages": [user("x")]})
    assert error.baton_code == "session_locked"


async def test_a_viewer_renders_another_servers_compaction_under_one_new_version(
    lsp: Harness, start_server
) -> None:
    """A render that finds the session another server writes moved on gave its document a
    new version, and the `reload` it then told moved the version on again: the render's
    answer named a version at once out of date, whose diagnostics never came."""
    sid = (await lsp.create(title="shared"))["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    viewer = await start_server()
    before = await viewer.render(sid)
    await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    )
    after = await viewer.render(sid)
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload"
    )
    assert (await viewer.render(sid))["version"] == after["version"] == before["version"] + 1
    published = await viewer.diagnostics(sid, lambda p: p.version == after["version"])
    usage = await viewer.request(protocol.USAGE, {"sessionId": sid})
    headline = next(d for d in published.diagnostics if d.code == "context-usage").message
    assert headline == usage["text"]["headline"]


async def test_a_read_only_session_offers_its_actions_greyed_out_or_none(
    lsp: Harness, start_server
) -> None:
    """Every compaction and undo action on a session another server holds fails with
    session_locked: a client that can grey actions out gets them disabled with the reason,
    one that cannot (Neovim) gets none (both got actions that could only fail)."""
    sid = (await lsp.create(title="shared"))["sessionId"]
    await lsp.append(sid, *conversation(40))  # more than the recent window kept verbatim
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    asked = {
        "textDocument": {"uri": protocol.session_uri(sid)},
        "range": whole,
        "context": {"diagnostics": []},
    }
    assert all(a.disabled is None for a in await lsp.request(CODE_ACTION, asked))
    viewer = await start_server()
    greyed = await viewer.request(CODE_ACTION, asked)
    assert greyed and all("another Baton process" in a.disabled.reason for a in greyed)
    neovim = await start_server(NEOVIM)
    assert not await neovim.request(CODE_ACTION, asked)


async def test_message_content_that_looks_like_json_rpc_stays_content(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    odd_input = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"x": [1]}}
    call = {"type": "tool_use", "id": "toolu_rpc", "name": "send_rpc", "input": odd_input}
    await lsp.append(sid, user("send it"), {"role": "assistant", "content": [call]})
    stored = (await lsp.get(sid))["messages"][1]["content"][0]
    assert stored["input"] == odd_input
    assert stored["name"] == "send_rpc"


async def test_an_empty_array_as_params_reads_as_an_empty_object(lsp: Harness) -> None:
    # Lua clients encode an empty table as [], so `list` with [] must work like {}
    created = await lsp.create(title="from lua")
    listed = await lsp.request(protocol.SESSION_LIST, [])
    assert created["sessionId"] in [s["sessionId"] for s in listed["sessions"]]


async def test_the_whole_view_of_a_long_session_arrives_whole(lsp: Harness) -> None:
    """An answer long enough to be encoded off the event loop (over 1,000 messages) is
    written as any other: one message, the contract's shape, every message in it."""
    sid = (await lsp.create(title="long"))["sessionId"]
    sent = [m for n in range(600) for m in (user(f"question {n} é 😀"), assistant(f"answer {n}"))]
    ids = (await lsp.append(sid, *sent))["messageIds"]

    got = await lsp.get(sid)
    rendered = await lsp.render(sid)

    assert [m["id"] for m in got["messages"]] == ids
    assert got["messages"][0]["content"][0]["text"] == "question 0 é 😀"
    assert [r["messageId"] for r in rendered["messages"]] == ids
    assert rendered["text"].count("question 599 é 😀") == 1
