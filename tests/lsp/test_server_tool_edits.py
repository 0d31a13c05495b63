"""Where an edit lands in the editor: the range sent with `workspace/applyEdit` counted in
the document the editor has, which may differ from the bytes on the disk."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from test_server_tools import EDIT, WITH_KEY

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
