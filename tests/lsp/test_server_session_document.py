"""The session document: rendering, versions, code actions and hovers on its ranges."""

from __future__ import annotations

from typing import Any

from lsp_harness import NEOVIM, Harness, assistant, conversation, user
from lsprotocol import types

from baton import protocol
from baton.cli.main import EXAMPLE_SESSION


def _range(start_line: int, end_line: int, end_char: int = 0) -> dict[str, Any]:
    return {
        "start": {"line": start_line, "character": 0},
        "end": {"line": end_line, "character": end_char},
    }


async def _actions(lsp: Harness, sid: str, rng: dict[str, Any], only: list[str] | None = None):
    context: dict[str, Any] = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    return await lsp.request(
        types.TEXT_DOCUMENT_CODE_ACTION,
        {"textDocument": {"uri": protocol.session_uri(sid)}, "range": rng, "context": context},
    )


async def test_render_gives_one_section_per_message_with_ranges(any_lsp: Harness) -> None:
    sid = (await any_lsp.create(title="Render me"))["sessionId"]
    tool = {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "a.py"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "print('hi')"}
    ids = (
        await any_lsp.append(
            sid,
            user("Look at a.py please"),
            {"role": "assistant", "content": [tool]},
            {"role": "user", "content": [result]},
            assistant("It prints hi.\nSecond line."),
        )
    )["messageIds"]
    doc = await any_lsp.render(sid)
    assert doc["uri"] == protocol.session_uri(sid)
    lines = doc["text"].split("\n")
    assert lines[0] == "# Render me"
    assert [m["messageId"] for m in doc["messages"]] == ids
    for entry in doc["messages"]:
        start, end = entry["range"]["start"], entry["range"]["end"]
        heading = lines[start["line"]]
        assert heading.startswith("## ") and entry["messageId"] in heading
        assert start["character"] == 0
        assert end["character"] == len(lines[end["line"]])  # ASCII: units == characters
    section = lines[
        doc["messages"][1]["range"]["start"]["line"] : doc["messages"][1]["range"]["end"]["line"]
        + 1
    ]
    assert any("Read" in line and "toolu_9" in line for line in section)
    assert "It prints hi." in doc["text"] and "Second line." in doc["text"]


async def test_ranges_count_utf16_code_units(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, user("smile 😀 and é"))
    doc = await lsp.render(sid)
    end = doc["messages"][0]["range"]["end"]
    last_line = doc["text"].split("\n")[end["line"]]
    assert last_line == "smile 😀 and é"
    assert end["character"] == len(last_line) + 1  # the emoji is two UTF-16 units


async def test_version_increments_on_every_change(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    versions = [(await lsp.render(sid))["version"]]
    await lsp.append(sid, user("one"))
    versions.append((await lsp.render(sid))["version"])
    await lsp.append(sid, assistant("two"))
    versions.append((await lsp.render(sid))["version"])
    await lsp.request(
        protocol.COMPACT,
        {
            "sessionId": sid,
            "direction": "up_to",
            "pivotMessageId": (await lsp.get(sid))["messages"][0]["id"],
        },
    )
    versions.append((await lsp.render(sid))["version"])
    assert versions == sorted(set(versions))
    assert (await lsp.render(sid))["version"] == versions[-1]  # reading changes nothing


async def test_code_actions_for_one_message_two_messages_and_after_a_compaction(
    any_lsp: Harness,
) -> None:
    sid = (await any_lsp.create())["sessionId"]
    # more than the recent window kept verbatim: the whole conversation can be compacted
    ids = (await any_lsp.append(sid, *conversation(40)))["messageIds"]
    doc = await any_lsp.render(sid)
    second = doc["messages"][1]["range"]
    inside = _range(second["start"]["line"] + 1, second["start"]["line"] + 2, 3)
    actions = await _actions(any_lsp, sid, inside)
    by_title = {a.title: a for a in actions}
    assert set(by_title) == {"Compact conversation", "Compact up to here", "Compact from here"}
    assert by_title["Compact conversation"].kind == types.CodeActionKind.Source
    assert list(by_title["Compact conversation"].command.arguments) == [
        {"sessionId": sid, "direction": "all"}
    ]
    up_to = by_title["Compact up to here"]
    assert up_to.kind == types.CodeActionKind.RefactorRewrite
    assert up_to.command.command == protocol.CMD_COMPACT_UP_TO
    assert list(up_to.command.arguments) == [{"sessionId": sid, "pivotMessageId": ids[1]}]
    assert list(by_title["Compact from here"].command.arguments) == [
        {"sessionId": sid, "pivotMessageId": ids[1]}
    ]

    span = _range(
        doc["messages"][1]["range"]["start"]["line"], doc["messages"][3]["range"]["end"]["line"], 2
    )
    titles = {a.title: a for a in await _actions(any_lsp, sid, span)}
    assert set(titles) == {"Compact conversation", "Compact selected messages"}
    assert list(titles["Compact selected messages"].command.arguments) == [
        {"sessionId": sid, "pivotMessageId": ids[1], "endMessageId": ids[3]}
    ]

    # a whole-line selection ending at column 0 of the next section covers one message
    whole = _range(second["start"]["line"], doc["messages"][2]["range"]["start"]["line"])
    assert {a.title for a in await _actions(any_lsp, sid, whole)} >= {"Compact up to here"}

    only = await _actions(any_lsp, sid, inside, only=["refactor"])
    assert {a.title for a in only} == {"Compact up to here", "Compact from here"}

    # (up to the second message: two messages, shorter than their summary)
    from_here = by_title["Compact from here"].command
    result = await any_lsp.command(from_here.command, *from_here.arguments)
    after = await _actions(any_lsp, sid, _range(0, 0))
    undo = next(a for a in after if a.title == "Undo last compaction")
    assert list(undo.command.arguments) == [{"sessionId": sid, "boundaryId": result["boundaryId"]}]
    for action in [*actions, *titles.values(), *after]:
        _built_from_its_model(action)


def _built_from_its_model(action: types.CodeAction) -> None:
    """A code action's argument is the wire form of its command's argument model, as the
    server's own model writes it (defaults included), not a dict written by hand."""
    assert action.command is not None
    model = protocol.COMMAND_BY_NAME[action.command.command].argument
    (argument,) = action.command.arguments or []
    assert model.model_validate(argument).wire() == argument, action.title


async def test_a_client_without_code_action_literals_gets_the_commands(start_server: Any) -> None:
    """LSP 3.17: without `codeActionLiteralSupport` a client takes `Command[]` only; it got
    CodeAction objects it cannot run."""
    plain = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities()
        )
    )
    lsp = await start_server(capabilities=plain)
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(2)))["messageIds"]
    first = (await lsp.render(sid))["messages"][0]["range"]["start"]["line"]
    commands = await _actions(lsp, sid, _range(first, first, 1))
    assert all(isinstance(c, types.Command) for c in commands)
    up_to = next(c for c in commands if c.title == "Compact up to here")
    assert up_to.command == protocol.CMD_COMPACT_UP_TO
    result = await lsp.command(up_to.command, *(up_to.arguments or []))
    assert result["summarizedMessageIds"] == ids[:1]


async def test_code_actions_work_on_a_document_the_client_never_opened(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(2)))["messageIds"]
    doc = await lsp.render(sid)
    first = doc["messages"][0]["range"]
    actions = await _actions(lsp, sid, _range(first["start"]["line"], first["start"]["line"], 1))
    up_to = next(a for a in actions if a.title == "Compact up to here")
    result = await lsp.command(up_to.command.command, *up_to.command.arguments)
    assert result["summarizedMessageIds"] == ids[:1]


async def test_code_actions_on_other_documents_are_none(lsp: Harness) -> None:
    path = lsp.workspace / "a.py"
    path.write_text("x = 1\n")
    result = await lsp.request(
        types.TEXT_DOCUMENT_CODE_ACTION,
        {
            "textDocument": {"uri": path.as_uri()},
            "range": _range(0, 0),
            "context": {"diagnostics": []},
        },
    )
    assert not result


async def test_hover_on_a_message_shows_its_tokens_and_share(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(2))
    view = await lsp.get(sid)
    doc = await lsp.render(sid)
    entry = doc["messages"][2]
    hover = await lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        {
            "textDocument": {"uri": protocol.session_uri(sid)},
            "position": {"line": entry["range"]["start"]["line"] + 1, "character": 0},
        },
    )
    tokens = view["messages"][2]["tokens"]
    assert f"{tokens:,} tokens" in hover.contents.value
    window = view["usage"]["contextWindow"]
    assert f"{window:,}-token window" in hover.contents.value
    assert hover.range.start.line == entry["range"]["start"]["line"]


async def test_hover_on_the_usage_line_previews_auto_compact(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(40))
    before = await lsp.render(sid)
    plan = await lsp.request(protocol.COMPACT, {"sessionId": sid, "dryRun": True})
    hover = await lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        {
            "textDocument": {"uri": protocol.session_uri(sid)},
            "position": {"line": 0, "character": 2},
        },
    )
    text = hover.contents.value
    assert "Context" in text
    assert f"summarize {len(plan['summarizedMessageIds'])} messages" in text
    assert f"latest {len(plan['keptMessageIds'])} messages" in text
    assert (await lsp.render(sid)) == before  # a hover never compacts


async def test_hover_on_the_usage_line_of_a_short_conversation(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, user("hi"))
    hover = await lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        {
            "textDocument": {"uri": protocol.session_uri(sid)},
            "position": {"line": 0, "character": 0},
        },
    )
    assert "nothing to summarize" in hover.contents.value


async def test_ranges_follow_the_negotiated_position_encoding(start_server) -> None:
    nvim = await start_server(NEOVIM)  # Neovim offers utf-8 first
    assert nvim.initialize_result.capabilities.position_encoding == "utf-8"
    sid = (await nvim.create())["sessionId"]
    await nvim.append(sid, user("smile 😀 and é"))
    doc = await nvim.render(sid)
    end = doc["messages"][0]["range"]["end"]
    last_line = doc["text"].split("\n")[end["line"]]
    assert end["character"] == len(last_line.encode("utf-8"))


async def test_opening_a_session_document_publishes_its_diagnostics(start_server) -> None:
    first = await start_server()
    sid = (await first.create(title="Yesterday's chat"))["sessionId"]
    await first.append(sid, *conversation(2))
    await first.close()
    # a later server on the same data dir: nothing has changed since it started
    later = await start_server()
    uri = protocol.session_uri(sid)
    text = (await later.render(sid))["text"]
    later.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    published = await later.diagnostics(sid)
    assert any(d.code == "context-usage" for d in published.diagnostics)


async def test_hover_on_an_imported_sessions_usage_line_names_the_unattributed_part(
    lsp: Harness,
) -> None:
    imported = await lsp.request(  # a Claude Code file with real API usage
        protocol.SESSION_IMPORT, {"path": str(EXAMPLE_SESSION), "format": "claude-code"}
    )
    sid = imported["sessionId"]
    usage = (await lsp.get(sid))["usage"]
    unattributed = usage["breakdown"]["unattributed"]
    assert unattributed > 0 and not usage["estimated"]
    hover = await lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        {
            "textDocument": {"uri": protocol.session_uri(sid)},
            "position": {"line": 0, "character": 0},
        },
    )
    text = hover.contents.value
    assert f"unattributed (the original client's system prompt and tools) {unattributed:,}" in text
    assert f"messages {usage['breakdown']['messages']:,}" in text


async def test_a_session_another_server_writes_is_rendered_as_it_now_stands(start_server) -> None:
    """A server that views another process's session (read-only, read again at each look)
    rendered the document it first read under the same version: after the writer appended
    and compacted, `render` gave the old text, ranges and version, and the code actions
    named messages the view no longer held; nothing told the change, and its meter and
    diagnostics kept the old figure."""
    writer = await start_server()
    sid = (await writer.create())["sessionId"]
    ids = (await writer.append(sid, *conversation(3)))["messageIds"]
    viewer = await start_server()
    before = await viewer.render(sid)
    assert [m["messageId"] for m in before["messages"]] == ids

    await writer.append(sid, user("one more question"))
    await writer.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    )
    view = [m["id"] for m in (await viewer.get(sid))["messages"]]
    after = await viewer.render(sid)

    assert [m["messageId"] for m in after["messages"]] == view
    assert after["version"] > before["version"]
    lines = after["text"].split("\n")
    for entry in after["messages"]:
        assert entry["messageId"] in lines[entry["range"]["start"]["line"]]
    last = after["messages"][-1]["range"]["start"]["line"]
    actions = await _actions(viewer, sid, _range(last, last, 1))
    up_to = next(a for a in actions if a.title == "Compact up to here")
    assert list(up_to.command.arguments) == [{"sessionId": sid, "pivotMessageId": view[-1]}]
    again = await viewer.render(sid)
    assert again["text"] == after["text"]
    assert again == await viewer.render(sid)  # read again unchanged: the same version
    # what the viewer found is told as a change: the meter and the diagnostics follow it
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload"
    )
    usage = await viewer.request(protocol.USAGE, {"sessionId": sid})
    told = await viewer.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["usedTokens"] == usage["usedTokens"]
    )
    assert told["sessionId"] == sid
    published = await viewer.latest_diagnostics(sid)
    headline = next(d for d in published.diagnostics if d.code == "context-usage").message
    assert headline == usage["text"]["headline"]


def _open(lsp: Harness, sid: str, text: str, version: int) -> None:
    uri = protocol.session_uri(sid)
    item = types.TextDocumentItem(uri=uri, language_id="markdown", version=version, text=text)
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))


async def _hover(lsp: Harness, sid: str, line: int) -> Any:
    return await lsp.request(
        types.TEXT_DOCUMENT_HOVER,
        {
            "textDocument": {"uri": protocol.session_uri(sid)},
            "position": {"line": line, "character": 0},
        },
    )


async def test_a_range_in_the_clients_older_copy_names_no_other_message(lsp: Harness) -> None:
    """A client that holds an older text of the document (it opened it, and the session was
    compacted since) asks for code actions and hovers at positions in that text: they were
    answered from the current text, where the same lines belong to another message, so
    "Compact up to here" on the message the user pointed at compacted a later one."""
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    old = await lsp.render(sid)
    _open(lsp, sid, old["text"], old["version"])
    await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[2]}
    )
    pointed = old["messages"][5]["range"]["start"]["line"] + 1  # inside ids[5], as it reads
    actions = await _actions(lsp, sid, _range(pointed, pointed, 1))
    for action in actions:
        (argument,) = action.command.arguments
        assert argument.get("pivotMessageId") in (None, ids[5]), action.title
    assert {a.title for a in actions} >= {"Compact conversation", "Undo last compaction"}
    hover = await _hover(lsp, sid, pointed)
    assert hover is None or ids[5] in hover.contents.value

    # once the client holds the current text, its positions name its messages again
    new = await lsp.render(sid)
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=protocol.session_uri(sid), version=new["version"]
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new["text"])],
        )
    )
    line = next(m for m in new["messages"] if m["messageId"] == ids[5])["range"]["start"]["line"]
    actions = await _actions(lsp, sid, _range(line + 1, line + 1, 1))
    up_to = next(a for a in actions if a.title == "Compact up to here")
    assert list(up_to.command.arguments) == [{"sessionId": sid, "pivotMessageId": ids[5]}]
    assert ids[5] in (await _hover(lsp, sid, line + 1)).contents.value
