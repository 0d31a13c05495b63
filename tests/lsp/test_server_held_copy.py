"""A client's own copy of a session document: the same text with its own line ends."""

from __future__ import annotations

from lsp_harness import Harness, conversation
from lsprotocol import types
from test_server_session_document import _actions, _hover, _open, _range

from baton import protocol


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


async def test_an_older_copy_under_the_uri_with_an_authority_names_no_other_message(
    lsp: Harness,
) -> None:
    """`baton:///sessions/<id>.md` names the session as `baton:/sessions/<id>.md` does: a
    client that opened it under that spelling holds its copy there."""
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    old = await lsp.render(sid)
    uri = f"baton:///sessions/{sid}.md"
    item = types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=old["text"])
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[2]}
    )
    pointed = old["messages"][5]["range"]["start"]["line"] + 1  # inside ids[5], as it reads
    actions = await lsp.request(
        types.TEXT_DOCUMENT_CODE_ACTION,
        {
            "textDocument": {"uri": uri},
            "range": _range(pointed, pointed, 1),
            "context": {"diagnostics": []},
        },
    )
    for action in actions:
        (argument,) = action.command.arguments
        assert argument.get("pivotMessageId") in (None, ids[5]), action.title
