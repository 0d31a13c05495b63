"""Where an edit lands in the editor: the range sent with `workspace/applyEdit` counted in
the document the editor has, which may differ from the bytes on the disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from test_server_tools import EDIT, WITH_KEY, told

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

AUTO_EDITS = {**WITH_KEY, "tools": {"permissions": {"edit": "auto"}}}


async def test_a_closed_file_with_a_bom_is_edited_at_the_editors_columns(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """An editor never shows a UTF-8 byte order mark as a character (VS Code and Neovim
    drop it from the document): the range, counted on the disk's text, put every change
    of the first line one column to the right of where it was meant."""
    lsp = await start_server(options=AUTO_EDITS)
    (lsp.workspace / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\ny = 2\n")
    sent: list[types.ApplyWorkspaceEditParams] = []

    @lsp.client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply(ls: Any, params: types.ApplyWorkspaceEditParams) -> Any:
        sent.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    sid = (await lsp.create())["sessionId"]
    change = {"command": "str_replace", "path": "bom.py", "old_str": "x = 1", "new_str": "x = 9"}
    fake_anthropic.reply(tool_use_block(EDIT, change), stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "change it"})

    (params,) = sent
    (edit,) = params.edit.document_changes or []
    assert isinstance(edit, types.TextDocumentEdit)
    (text_edit,) = edit.edits
    assert text_edit.new_text == "9"
    start, end = text_edit.range.start, text_edit.range.end
    assert (start.line, start.character, end.line, end.character) == (0, 4, 0, 5)


class LaggingEditor:
    """An editor that applies each edit to its buffer (opening a closed file as one, the
    disk left as it is) and answers before it tells the server: its didOpen / didChange
    come only when `sync` is called. A TextDocumentEdit with a version the buffer no
    longer has is refused, as VS Code's and Neovim's clients do."""

    def __init__(self, lsp: Any) -> None:
        self.lsp = lsp
        self.buffers: dict[str, tuple[str, int]] = {}
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.reported = False

        def apply(ls: Any, params: types.ApplyWorkspaceEditParams) -> Any:
            return self.apply(params)

        lsp.client.feature(types.WORKSPACE_APPLY_EDIT)(apply)

    def open(self, path: Path, version: int) -> None:
        text = path.read_text()
        self.buffers[path.as_uri()] = (text, version)
        item = types.TextDocumentItem(
            uri=path.as_uri(), language_id="python", version=version, text=text
        )
        self.lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        self.reported = True

    def report(self, path: Path, text: str) -> None:
        """The user types `text` into the buffer, and the editor at last tells the server
        the buffer (opened by the edit, or changed since its last report)."""
        uri = path.as_uri()
        held = self.buffers.get(uri)
        version = (held[1] if held is not None else 0) + 1
        self.buffers[uri] = (text, version)
        if not self.reported:
            item = types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            self.lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        else:
            whole = types.TextDocumentContentChangeWholeDocument(text=text)
            document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
            self.lsp.client.text_document_did_change(
                types.DidChangeTextDocumentParams(text_document=document, content_changes=[whole])
            )
        self.reported = True

    def apply(self, params: types.ApplyWorkspaceEditParams) -> Any:
        self.edits.append(params)
        for change in params.edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                Path(change.uri.removeprefix("file://")).write_text("")  # VS Code's, on disk
                continue
            assert isinstance(change, types.TextDocumentEdit)
            uri, version = change.text_document.uri, change.text_document.version
            held = self.buffers.get(uri)
            if held is not None and version is not None and version != held[1]:
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="Version mismatch"
                )
            text, now = held or (Path(uri.removeprefix("file://")).read_text(), 0)
            for edit in change.edits:
                start, end = offset(text, edit.range.start), offset(text, edit.range.end)
                text = text[:start] + edit.new_text + text[end:]
            self.buffers[uri] = (text, now + 1)
        return types.ApplyWorkspaceEditResult(applied=True)


def offset(text: str, position: types.Position) -> int:
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: position.line]) + position.character


TWO_EDITS = [
    {
        "command": "str_replace",
        "path": "calc.py",
        "old_str": "a = 1\n",
        "new_str": "a = 1\nc = 3\n",
    },
    {"command": "str_replace", "path": "calc.py", "old_str": "b = 2", "new_str": "b = 20"},
]


@pytest.mark.parametrize("open_first", [False, True])
async def test_a_second_edit_of_a_file_sees_the_first_before_the_editor_reports_it(
    start_server: Any, fake_anthropic: FakeAnthropic, open_first: bool
) -> None:
    """Two edits of one file in one reply, the editor's didOpen / didChange for the first
    not yet arrived when the second is planned: the second was worked out on the text
    before the first, and its range landed on the wrong line of a closed file (c = 30
    instead of b = 20), or was refused for the version of an open one."""
    lsp = await start_server(options=AUTO_EDITS)
    calc = lsp.workspace / "calc.py"
    calc.write_text("a = 1\nb = 2\n")
    editor = LaggingEditor(lsp)
    if open_first:
        editor.open(calc, 5)
    sid = (await lsp.create())["sessionId"]
    uses = [tool_use_block(EDIT, change, id=f"toolu_{n}") for n, change in enumerate(TWO_EDITS)]
    fake_anthropic.reply(*uses, stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "change it"})

    results = fake_anthropic.message_requests()[1].body["messages"][-1]["content"]
    assert [r["content"] for r in results] == [
        "Applied: Edit calc.py (+1 -0) at line 1.",
        "Applied: Edit calc.py (+1 -1) at line 3.",
    ]
    assert editor.buffers[calc.as_uri()][0] == "a = 1\nc = 3\nb = 20\n"
    assert calc.read_text() == "a = 1\nb = 2\n"  # the editor has not saved

    # once the editor reports the file, its word stands (the user typed meanwhile)
    editor.report(calc, "a = 1\nc = 3\nb = 20\nd = 4\n")
    change = {"command": "str_replace", "path": "calc.py", "old_str": "d = 4", "new_str": "d = 5"}
    fake_anthropic.reply(tool_use_block(EDIT, change), stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "and d"})
    assert told(fake_anthropic, 3)["content"] == "Applied: Edit calc.py (+1 -1) at line 4."
    assert editor.buffers[calc.as_uri()][0] == "a = 1\nc = 3\nb = 20\nd = 5\n"
    (last,) = editor.edits[-1].edit.document_changes or []
    assert isinstance(last, types.TextDocumentEdit)
    assert last.text_document.version == editor.buffers[calc.as_uri()][1] - 1


async def test_a_file_created_and_edited_in_one_reply_keeps_both(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The file a CreateFile made is empty on the disk while the editor's buffer holds the
    text: the edit that followed it was looked for in nothing ('no match')."""
    lsp = await start_server(options=AUTO_EDITS)
    editor = LaggingEditor(lsp)
    sid = (await lsp.create())["sessionId"]
    create = {"command": "create", "path": "new.py", "file_text": "x = 1\n"}
    change = {"command": "str_replace", "path": "new.py", "old_str": "x = 1", "new_str": "x = 2"}
    fake_anthropic.reply(
        tool_use_block(EDIT, create, id="toolu_c"), tool_use_block(EDIT, change, id="toolu_e")
    )
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "make it"})

    results = fake_anthropic.message_requests()[1].body["messages"][-1]["content"]
    assert [r["content"] for r in results] == [
        "Applied: Create new.py (+1 -0).",
        "Applied: Edit new.py (+1 -1) at line 1.",
    ]
    assert editor.buffers[(lsp.workspace / "new.py").as_uri()][0] == "x = 2\n"


async def test_an_edit_the_editor_reported_and_dropped_before_answering_is_not_assumed(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The editor opened the file with the first edit, and the user closed it unsaved,
    before the answer came: the server took the first edit's text for the editor's, and the
    second edit, worked out on it, landed on the disk's text at the wrong line."""
    lsp = await start_server(options=AUTO_EDITS)
    calc = lsp.workspace / "calc.py"
    calc.write_text("a = 1\nb = 2\n")
    editor = LaggingEditor(lsp)
    discard = editor.apply

    def apply_then_discard(params: types.ApplyWorkspaceEditParams) -> Any:
        result = discard(params)
        for uri, (text, version) in list(editor.buffers.items()):
            item = types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
            closed = types.TextDocumentIdentifier(uri=uri)
            lsp.client.text_document_did_close(types.DidCloseTextDocumentParams(closed))
            del editor.buffers[uri]
        return result

    editor.apply = apply_then_discard  # type: ignore[method-assign]
    sid = (await lsp.create())["sessionId"]
    uses = [tool_use_block(EDIT, change, id=f"toolu_{n}") for n, change in enumerate(TWO_EDITS)]
    fake_anthropic.reply(*uses, stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "change it"})

    (second,) = editor.edits[1].edit.document_changes or []
    assert isinstance(second, types.TextDocumentEdit)
    start, end = (
        second.edit.range.start if False else second.edits[0].range.start,
        second.edits[0].range.end,
    )
    start, end = second.edits[0].range.start, second.edits[0].range.end
    assert (start.line, start.character, end.line, end.character) == (1, 5, 1, 5)  # b = 2|
