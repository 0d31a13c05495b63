"""A client's own copy of a session document: the same text with its own line ends."""

from __future__ import annotations

from lsp_harness import Harness, conversation
from test_server_session_document import _actions, _hover, _open, _range


async def test_a_copy_with_crlf_line_ends_is_the_current_text(lsp: Harness) -> None:
    """Neovim sends a buffer of 'fileformat' dos (Windows' default) with CRLF line ends:
    its lines and columns are those of the rendering, so its positions name messages."""
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    rendered = await lsp.render(sid)
    _open(lsp, sid, rendered["text"].replace("\n", "\r\n"), rendered["version"])
    line = rendered["messages"][3]["range"]["start"]["line"] + 1
    actions = await _actions(lsp, sid, _range(line, line, 1))
    up_to = next(a for a in actions if a.title == "Compact up to here")
    assert list(up_to.command.arguments) == [{"sessionId": sid, "pivotMessageId": ids[3]}]
    assert ids[3] in (await _hover(lsp, sid, line)).contents.value
