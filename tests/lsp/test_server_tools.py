"""The workspace tools through the real server: `baton/tool/permission` answered by the
client, the edit applied with `workspace/applyEdit`, refusals, cancelling while asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsp_harness import NEOVIM, VSCODE, Harness
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

WITH_KEY = {"anthropicApiKey": "sk-ant-test-0123456789abcdefghij"}
EDIT = "str_replace_based_edit_tool"
UNITS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}
RENAME = {
    "command": "str_replace",
    "path": "utils.py",
    "old_str": "parse_date",
    "new_str": "parse_day",
}


def asking() -> types.ClientCapabilities:
    caps = client_capabilities(VSCODE)
    caps.experimental = {"baton": {"toolPermission": True}}
    return caps


class Editor:
    """The client's side: answers the permission request and applies edits to the files."""

    def __init__(self, lsp: Harness, outcome: str = "allowOnce", applied: bool = True) -> None:
        self.asked: list[Any] = []
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.outcome, self.applied = outcome, applied
        self.hold = asyncio.Event()
        self.waiting = asyncio.Event()
        self.lsp = lsp

        async def permission(ls: Any, params: Any) -> dict[str, str]:
            return await self.permission(params)

        def apply(ls: Any, params: types.ApplyWorkspaceEditParams) -> Any:
            return self.apply(params)

        lsp.client.feature(protocol.TOOL_PERMISSION)(permission)
        lsp.client.feature(types.WORKSPACE_APPLY_EDIT)(apply)

    async def permission(self, params: Any) -> dict[str, str]:
        self.asked.append(params)
        if self.outcome == "never":
            self.waiting.set()
            await self.hold.wait()
        return {"outcome": self.outcome}

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if not self.applied:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")
        changes = [(c.text_document.uri, c.edits) for c in params.edit.document_changes or []]
        for uri, edits in [*changes, *(params.edit.changes or {}).items()]:
            path = self.lsp.workspace / uri.rsplit("/", 1)[-1]
            for edit in edits:
                text = path.read_text() if path.exists() else ""
                start, end = self.offset(text, edit.range.start), self.offset(text, edit.range.end)
                path.write_text(text[:start] + edit.new_text + text[end:])
        return types.ApplyWorkspaceEditResult(applied=True)

    def offset(self, text: str, position: types.Position) -> int:
        """A position's offset in `text`, its character counted in the position encoding
        the server chose (the tests' files break lines at \\n)."""
        assert self.lsp.initialize_result is not None
        encoding = str(self.lsp.initialize_result.capabilities.position_encoding or "utf-16")
        lines = text.split("\n")
        line, column, units = lines[position.line], 0, 0
        while units < position.character:
            codec, size = UNITS[encoding]
            units += len(line[column].encode(codec)) // size
            column += 1
        assert units == position.character, "a position inside a character"
        return sum(len(line) + 1 for line in lines[: position.line]) + column


def field(params: Any, name: str) -> Any:
    return params[name] if isinstance(params, dict) else getattr(params, name)


def told(fake: FakeAnthropic, request: int = 1) -> dict[str, Any]:
    last = fake.message_requests()[request].body["messages"][-1]["content"]
    return next(b for b in last if b["type"] == "tool_result")


async def test_an_approved_edit_is_asked_for_and_applied_by_the_editor(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY, capabilities=asking())
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n    return s\n")
    editor = Editor(lsp)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block("read_file", {"path": "utils.py"}), stop_reason="tool_use")
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    fake_anthropic.reply("Renamed.")
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})

    assert result["message"]["content"] == [{"type": "text", "text": "Renamed."}]
    assert len(editor.asked) == 1  # the read was auto, the edit asked
    asked = editor.asked[0]
    assert field(asked, "title") == "Edit utils.py (+1 -1)"
    assert field(asked, "kind") == "edit" and field(asked, "toolUseId") == "toolu_e"
    assert "+def parse_day(s):" in field(asked, "diff")
    (edit,) = editor.edits
    annotation = edit.edit.change_annotations["baton-edit"]
    assert annotation.label == "Baton: Edit utils.py (+1 -1)"
    assert not annotation.needs_confirmation
    assert (lsp.workspace / "utils.py").read_text() == "def parse_day(s):\n    return s\n"
    assert told(fake_anthropic, 2)["content"] == "Applied: Edit utils.py (+1 -1) at line 1."
    tools = fake_anthropic.message_requests()[0].body["tools"]
    assert {"type": "text_editor_20250728", "name": EDIT} in tools
    calls = [c for m in (await lsp.get(sid))["messages"] for c in m.get("toolCalls", [])]
    assert [(c["title"], c["status"], c.get("summary")) for c in calls] == [
        ("Read utils.py", "done", "2 lines"),
        ("Edit utils.py (+1 -1)", "done", "applied"),
    ]
    assert "-parse_date\n+parse_day" in calls[1]["diff"]  # from the call's input
    transcript = (lsp.data_dir / "sessions" / f"{sid}.jsonl").read_text()
    assert "toolCalls" not in transcript  # computed for views, never stored


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
async def test_an_edit_is_placed_in_the_position_encoding_agreed_on(
    start_server: Any, fake_anthropic: FakeAnthropic, encoding: str
) -> None:
    caps = asking()
    caps.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    lsp = await start_server(NEOVIM, options=WITH_KEY, capabilities=caps)
    assert lsp.initialize_result is not None
    assert lsp.initialize_result.capabilities.position_encoding == encoding
    (lsp.workspace / "utils.py").write_text("s = '😀 café'; parse_date(s)\n")
    editor = Editor(lsp)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use")
    fake_anthropic.reply("Renamed.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    assert len(editor.edits) == 1
    assert (lsp.workspace / "utils.py").read_text() == "s = '😀 café'; parse_day(s)\n"


def taking(edits: types.WorkspaceEditClientCapabilities | None) -> types.ClientCapabilities:
    caps = asking()
    assert caps.workspace is not None
    caps.workspace.workspace_edit = edits
    return caps


async def test_a_client_without_document_changes_gets_plain_changes(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY, capabilities=taking(None))
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n")
    editor = Editor(lsp)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use")
    fake_anthropic.reply("Renamed.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    (edit,) = editor.edits
    assert edit.edit.document_changes is None and edit.edit.change_annotations is None
    assert (lsp.workspace / "utils.py").read_text() == "def parse_day(s):\n"
    assert told(fake_anthropic)["content"] == "Applied: Edit utils.py (+1 -1) at line 1."


async def test_a_client_that_cannot_create_files_is_never_sent_a_create(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    # Emacs's eglot 1.9: documentChanges, but no resource operations (it would take a
    # CreateFile for an edit of a file named "")
    edits = types.WorkspaceEditClientCapabilities(document_changes=True)
    lsp = await start_server(options=WITH_KEY, capabilities=taking(edits))
    editor = Editor(lsp)
    sid = (await lsp.create())["sessionId"]
    create = {"command": "create", "path": "new.py", "file_text": "x = 1\n"}
    fake_anthropic.reply(tool_use_block(EDIT, create), stop_reason="tool_use")
    fake_anthropic.reply("Made.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "make it"})
    (edit,) = editor.edits
    (change,) = edit.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)  # the text alone, no CreateFile
    assert (lsp.workspace / "new.py").read_text() == "x = 1\n"
    assert told(fake_anthropic)["content"] == "Applied: Create new.py (+1 -0)."


async def test_a_denied_edit_leaves_the_file_and_tells_the_model(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY, capabilities=asking())
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n")
    editor = Editor(lsp, outcome="deny")
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use")
    fake_anthropic.reply("OK, not renamed.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    assert editor.edits == []
    assert (lsp.workspace / "utils.py").read_text() == "def parse_date(s):\n"
    assert told(fake_anthropic)["content"].startswith("Denied: the user did not allow")


async def test_a_refused_apply_edit_is_told_to_the_model(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(
        options={**WITH_KEY, "tools": {"reviewEdits": True}}, capabilities=asking()
    )
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n")
    editor = Editor(lsp, applied=False)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use")
    fake_anthropic.reply("Understood.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    assert editor.edits[0].edit.change_annotations["baton-edit"].needs_confirmation is True
    assert told(fake_anthropic)["content"].startswith("Not applied: refused: the user said no")


async def test_an_unreadable_apply_edit_answer_is_told_to_the_model(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY, capabilities=asking())
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n")
    asked: list[Any] = []

    def permission(ls: Any, params: Any) -> dict[str, str]:
        return {"outcome": "allowOnce"}

    def apply(ls: Any, params: types.ApplyWorkspaceEditParams) -> Any:
        asked.append(params)
        return "ok"  # no ApplyWorkspaceEditResult: the send waited for ever on it

    lsp.client.feature(protocol.TOOL_PERMISSION)(permission)
    lsp.client.feature(types.WORKSPACE_APPLY_EDIT)(apply)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use")
    fake_anthropic.reply("Checking.")
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    assert result["message"]["content"] == [{"type": "text", "text": "Checking."}]
    assert len(asked) == 1
    assert told(fake_anthropic)["content"].startswith("Not applied: the editor did not apply it")
    assert (await lsp.request(protocol.SESSION_LIST, {}))["sessions"]  # still serving


async def test_a_client_without_the_capability_is_never_asked(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY)
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n")
    editor = Editor(lsp)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME), stop_reason="tool_use")
    fake_anthropic.reply("Cannot.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})
    assert editor.asked == [] and editor.edits == []
    # not "off in this editor's settings": the setting is ask, and this editor cannot ask
    assert "this editor cannot ask for it" in told(fake_anthropic)["content"]


async def test_cancelling_the_send_while_the_user_is_asked_keeps_a_valid_session(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=WITH_KEY, capabilities=asking())
    (lsp.workspace / "utils.py").write_text("def parse_date(s):\n")
    editor = Editor(lsp, outcome="never")
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    params = {"sessionId": sid, "content": "rename it"}
    future = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.SESSION_SEND, params, "send-1")
    )
    try:
        await asyncio.wait_for(editor.waiting.wait(), 20)
        lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="send-1"))
        try:
            await asyncio.wait_for(future, 20)
            raise AssertionError("the send should have been cancelled")
        except JsonRpcException as exc:
            assert exc.code == -32800
    finally:
        editor.hold.set()
    messages = (await lsp.get(sid))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    result = messages[2]["content"][0]
    assert result["tool_use_id"] == "toolu_e" and result["is_error"] is True
    assert result["content"].startswith("Not run: the user stopped the turn")
    assert (lsp.workspace / "utils.py").read_text() == "def parse_date(s):\n"


async def test_a_file_the_editor_opened_through_a_symlink_is_read_and_edited_there(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The editor's text was looked up under the resolved path only: `alias.py` (a link
    to `real.py`) open with unsaved changes was read from the disk, and the edit computed
    on the disk's text went to `real.py`, beside the buffer the user was typing in."""
    lsp = await start_server(options={**WITH_KEY, "tools": {"permissions": {"edit": "auto"}}})
    (lsp.workspace / "real.py").write_text("on disk\n")
    alias = lsp.workspace / "alias.py"
    alias.symlink_to(lsp.workspace / "real.py")
    item = types.TextDocumentItem(uri=alias.as_uri(), language_id="python", version=4, text="x\n")
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    editor = Editor(lsp, applied=False)
    sid = (await lsp.create())["sessionId"]
    replace = {"command": "str_replace", "path": "alias.py", "old_str": "x", "new_str": "y"}
    fake_anthropic.reply(tool_use_block("read_file", {"path": "alias.py"}), stop_reason="tool_use")
    fake_anthropic.reply(tool_use_block(EDIT, replace), stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "change it"})

    assert told(fake_anthropic, 1)["content"] == "     1\tx"
    (sent,) = editor.edits
    (change,) = sent.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert (change.text_document.uri, change.text_document.version) == (alias.as_uri(), 4)
    assert [e.new_text for e in change.edits] == ["y"]


async def test_cancelling_the_send_while_the_editor_applies_an_edit_says_it_may_be_applied(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The editor may still apply an edit whose `workspace/applyEdit` the send stopped
    waiting for (the user reviewing it in a preview): the model was told "Not run: ...
    before this call ran", and the file changed after all."""
    lsp = await start_server(options={**WITH_KEY, "tools": {"permissions": {"edit": "auto"}}})
    utils = lsp.workspace / "utils.py"
    utils.write_text("def parse_date(s):\n")
    asked, release = asyncio.Event(), asyncio.Event()

    @lsp.client.feature(types.WORKSPACE_APPLY_EDIT)
    async def apply(ls: Any, params: types.ApplyWorkspaceEditParams) -> Any:
        asked.set()
        await release.wait()
        utils.write_text("def parse_day(s):\n")
        return types.ApplyWorkspaceEditResult(applied=True)

    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    params = {"sessionId": sid, "content": "rename it"}
    future = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.SESSION_SEND, params, "send-1")
    )
    try:
        await asyncio.wait_for(asked.wait(), 20)
        lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="send-1"))
        try:
            await asyncio.wait_for(future, 20)
            raise AssertionError("the send should have been cancelled")
        except JsonRpcException as exc:
            assert exc.code == -32800
    finally:
        release.set()
    result = (await lsp.get(sid))["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_e" and result["is_error"] is True
    assert not result["content"].startswith("Not run"), result["content"]
    assert "may have been applied" in result["content"]


async def test_a_new_file_the_editor_has_open_unsaved_is_read_and_edited_there(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """A buffer for a file not yet saved (`:e notes.md` in Neovim, synced with didOpen):
    read_file answered "does not exist", and an edit planned as a new file was refused
    "the file changed meanwhile", each time the model tried."""
    lsp = await start_server(options={**WITH_KEY, "tools": {"permissions": {"edit": "auto"}}})
    notes = lsp.workspace / "notes.md"
    item = types.TextDocumentItem(uri=notes.as_uri(), language_id="md", version=3, text="draft\n")
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    editor = Editor(lsp, applied=False)
    sid = (await lsp.create())["sessionId"]
    replace = {"command": "str_replace", "path": "notes.md", "old_str": "draft", "new_str": "final"}
    fake_anthropic.reply(tool_use_block("read_file", {"path": "notes.md"}), stop_reason="tool_use")
    fake_anthropic.reply(tool_use_block(EDIT, replace), stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "finish it"})

    assert told(fake_anthropic, 1)["content"] == "     1\tdraft"
    (sent,) = editor.edits
    (change,) = sent.edit.document_changes or []  # no CreateFile: the editor has it
    assert isinstance(change, types.TextDocumentEdit)
    assert (change.text_document.uri, change.text_document.version) == (notes.as_uri(), 3)
    assert [e.new_text for e in change.edits] == ["final"]
    assert not notes.exists()
