"""Editor files reach the restore step: open, change, save, close and baton/activeEditor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_harness import Harness, conversation
from lsprotocol import types

from baton import protocol


def open_file(lsp: Harness, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    lsp.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )
    return uri


async def compact_all_but_last(lsp: Harness) -> tuple[str, dict[str, Any]]:
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    result = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    return sid, result


def attachments_text(view: dict[str, Any]) -> str:
    return json.dumps([m["content"] for m in view["messages"] if m["kind"] == "attachment"])


async def test_an_open_and_edited_file_is_restored_after_a_compaction(any_lsp: Harness) -> None:
    path = any_lsp.workspace / "calc.py"
    path.write_text("value = 1\n")
    uri = open_file(any_lsp, path, "value = 1\n")
    any_lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=8),
                        end=types.Position(line=0, character=9),
                    ),
                    text="42",
                )
            ],
        )
    )
    sid, result = await compact_all_but_last(any_lsp)
    assert [f["uri"] for f in result["restoredFiles"]] == [uri]
    assert result["restoredFiles"][0]["tokens"] > 0
    view = await any_lsp.get(sid)
    attachments = [m["attachment"] for m in view["messages"] if m["kind"] == "attachment"]
    assert attachments == [{"path": str(path), "label": "Restored file"}]  # no text to parse
    text = attachments_text(view)
    assert "value = 42" in text  # the editor's unsaved text, not the disk's
    assert "value = 1" not in text


async def test_a_change_to_a_document_never_opened_is_dropped_without_an_error(
    lsp: Harness,
) -> None:
    path = lsp.workspace / "never.py"
    path.write_text("a = 1\n")
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="a = 2\n")],
        )
    )
    sid = (await lsp.create())["sessionId"]  # the server goes on; the change went nowhere
    assert (await lsp.get(sid))["messages"] == []
    errors = [
        m for m in lsp.recorder.of(types.WINDOW_LOG_MESSAGE) if m.type == types.MessageType.Error
    ]
    assert errors == []
    uri = open_file(lsp, path, "a = 1\n")  # once opened, changes apply
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="a = 3\n")],
        )
    )
    sid, _ = await compact_all_but_last(lsp)
    assert "a = 3" in attachments_text(await lsp.get(sid))


async def test_full_document_changes_are_applied_too(lsp: Harness) -> None:
    path = lsp.workspace / "notes.py"
    path.write_text("old = True\n")
    uri = open_file(lsp, path, "old = True\n")
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="new = True\n")],
        )
    )
    lsp.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    sid, _ = await compact_all_but_last(lsp)
    assert "new = True" in attachments_text(await lsp.get(sid))


async def test_focused_closed_files_are_read_from_disk(lsp: Harness) -> None:
    path = lsp.workspace / "disk.py"
    path.write_text("on_disk = 'yes'\n")
    lsp.client.protocol.notify(protocol.ACTIVE_EDITOR, {"uri": path.as_uri()})
    lsp.client.protocol.notify(protocol.ACTIVE_EDITOR, {"uri": None})
    sid, result = await compact_all_but_last(lsp)
    assert [f["uri"] for f in result["restoredFiles"]] == [path.as_uri()]
    assert "on_disk = 'yes'" in attachments_text(await lsp.get(sid))


async def test_closed_outside_and_secret_files_follow_the_rules(
    lsp: Harness, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text("outside = 1\n")
    secret = lsp.workspace / ".env"
    secret.write_text("TOKEN=hunter2\n")
    gone = lsp.workspace / "gone.py"
    gone.write_text("gone = 1\n")
    open_file(lsp, outside, "outside = 1\n")
    open_file(lsp, secret, "TOKEN=hunter2\n")
    gone_uri = open_file(lsp, gone, "gone = 1\n")
    lsp.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=gone_uri))
    )
    gone.unlink()
    sid, result = await compact_all_but_last(lsp)
    assert result["restoredFiles"] == []
    text = attachments_text(await lsp.get(sid))
    assert "hunter2" not in text and "outside = 1" not in text


async def test_malformed_active_editor_notifications_change_nothing(lsp: Harness) -> None:
    for params in ({"uri": 42}, [1, 2], "file:///x", None):
        lsp.client.protocol.notify(protocol.ACTIVE_EDITOR, params)
    sid, result = await compact_all_but_last(lsp)  # the server still serves
    assert result["restoredFiles"] == []
    assert (await lsp.get(sid))["session"]["compactions"] == 1


async def test_a_uri_that_cannot_be_a_path_is_skipped_and_cleared_by_close(lsp: Harness) -> None:
    bad_uri = lsp.workspace.as_uri() + "/a%00b.py"
    lsp.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=bad_uri, language_id="python", version=1, text="x = 1\n"
            )
        )
    )
    good = lsp.workspace / "good.py"
    good.write_text("good = 1\n")
    open_file(lsp, good, "good = 1\n")

    sid, result = await compact_all_but_last(lsp)
    assert [f["uri"] for f in result["restoredFiles"]] == [good.as_uri()]
    assert [f["uri"] for f in result["skippedFiles"]] == [bad_uri]
    assert "path" in result["skippedFiles"][0]["reason"]

    lsp.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=bad_uri))
    )
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    again = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    assert again.get("skippedFiles", []) == []
    assert (await lsp.get(sid))["session"]["compactions"] == 2
