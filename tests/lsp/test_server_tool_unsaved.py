"""The workspace tools and the editor's unsaved text: what the editor has open is what
every tool reads, through the real server."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from test_server_tool_edits import AUTO_EDITS, LaggingEditor
from test_server_tools import EDIT, WITH_KEY, told

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block


async def test_search_text_searches_the_editors_unsaved_text(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """read_file showed the editor's buffer and search_text the disk's bytes: a name the
    user had just typed (or the model's own edit, not saved yet) was not found, a name
    they had removed was, at line numbers read_file did not show."""
    lsp = await start_server(options=WITH_KEY)
    (lsp.workspace / "app.py").write_text("import os\nold_name = 1\n")
    (lsp.workspace / "other.py").write_text("new_name = 2\n")
    unsaved = "import os\n\n\nnew_name = 1\n"
    item = types.TextDocumentItem(
        uri=(lsp.workspace / "app.py").as_uri(), language_id="python", version=2, text=unsaved
    )
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(
        tool_use_block("search_text", {"pattern": "new_name|old_name"}), stop_reason="tool_use"
    )
    fake_anthropic.reply("Found.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "where is it?"})

    assert sorted(told(fake_anthropic)["content"].split("\n")) == [
        "app.py:4: new_name = 1",
        "other.py:1: new_name = 2",
    ]


async def test_search_text_finds_an_edit_the_editor_has_not_reported_yet(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options=AUTO_EDITS)
    (lsp.workspace / "app.py").write_text("old_name = 1\n")
    editor = LaggingEditor(lsp)
    sid = (await lsp.create())["sessionId"]
    rename = {"command": "str_replace", "path": "app.py", "old_str": "old", "new_str": "new"}
    fake_anthropic.reply(tool_use_block(EDIT, rename), stop_reason="tool_use")
    fake_anthropic.reply(
        tool_use_block("search_text", {"pattern": "_name"}), stop_reason="tool_use"
    )
    fake_anthropic.reply("Renamed.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "rename it"})

    assert editor.buffers[(lsp.workspace / "app.py").as_uri()][0] == "new_name = 1\n"
    assert told(fake_anthropic, 2)["content"] == "app.py:1: new_name = 1"


async def test_a_prompt_attaching_a_file_the_editor_has_but_the_disk_has_not_is_sent(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The active editor's file is attached with its text; a buffer whose file is not on
    the disk (deleted by a branch switch, or new and not saved yet) failed the whole send
    ("attachments[0].path ... does not exist"), with the text right there."""
    lsp = await start_server(options=WITH_KEY)
    gone = lsp.workspace / "gone.py"
    item = types.TextDocumentItem(
        uri=gone.as_uri(), language_id="python", version=1, text="x = 1\n"
    )
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply("Seen.")
    fake_anthropic.reply("Seen again.")
    given = {"kind": "file", "path": gone.as_uri(), "text": "x = 1\n", "languageId": "python"}
    read = {"kind": "file", "path": str(gone)}  # no text: the server reads the editor's
    for attached in (given, read):
        params = {"sessionId": sid, "content": "what is this?", "attachments": [attached]}
        await lsp.request(protocol.SESSION_SEND, params)

    texts = [m for m in (await lsp.get(sid))["messages"] if m["kind"] == "attachment"]
    assert len(texts) == 2
    assert all("x = 1" in m["content"][0]["text"] for m in texts)
    nowhere = {"kind": "file", "path": str(lsp.workspace / "nowhere.py")}
    params = {"sessionId": sid, "content": "and this?", "attachments": [nowhere]}
    error = await lsp.error(protocol.SESSION_SEND, params)
    assert error.message == "attachments[0]: nowhere.py does not exist"


async def test_a_document_opened_past_the_tracked_bound_is_read_as_the_editor_has_it(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """With 256 files tracked, a document opened next was dropped as it was opened (it
    counted as closed while it was made): the tools read the disk's text of a file the user
    had changed and not saved, and an edit worked out on it went to the editor's buffer
    with no version, at a range counted on other text."""
    lsp = await start_server(options=AUTO_EDITS)
    editor = LaggingEditor(lsp)
    for n in range(1, 300):
        item = types.TextDocumentItem(
            uri=(lsp.workspace / f"f{n:03}.py").as_uri(), language_id="python", version=1, text=""
        )
        lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    first = lsp.workspace / "f000.py"
    first.write_text("saved = 1\n")
    editor.open(first, 1)
    editor.report(first, "# unsaved\nsaved = 1\n")
    sid = (await lsp.create())["sessionId"]
    change = {"command": "str_replace", "path": "f000.py", "old_str": "1", "new_str": "2"}
    fake_anthropic.reply(tool_use_block("read_file", {"path": "f000.py"}), stop_reason="tool_use")
    fake_anthropic.reply(tool_use_block(EDIT, change), stop_reason="tool_use")
    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "change it"})

    assert told(fake_anthropic, 1)["content"] == "     1\t# unsaved\n     2\tsaved = 1"
    assert editor.buffers[first.as_uri()][0] == "# unsaved\nsaved = 2\n"


async def test_search_text_searches_a_file_only_the_editor_has(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """search_text with a path naming a buffer not saved yet answered "does not exist",
    while read_file read it; a path neither the disk nor the editor has still does."""
    lsp = await start_server(options=WITH_KEY)
    new = lsp.workspace / "new.py"
    item = types.TextDocumentItem(
        uri=new.as_uri(), language_id="python", version=1, text="def helper():\n    pass\n"
    )
    lsp.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(
        tool_use_block("search_text", {"pattern": "helper", "path": "new.py"}),
        stop_reason="tool_use",
    )
    fake_anthropic.reply(
        tool_use_block("search_text", {"pattern": "helper", "path": "none.py"}),
        stop_reason="tool_use",
    )
    fake_anthropic.reply("Found.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "where is it?"})

    assert told(fake_anthropic)["content"] == "new.py:1: def helper():"
    missing = told(fake_anthropic, 2)
    assert missing.get("is_error") and "'none.py' does not exist" in str(missing["content"])
