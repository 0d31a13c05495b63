"""The LSP front end's ToolHost: `baton/tool/permission` asked of the client (when it
declares `capabilities.experimental.baton.toolPermission`), the text of the documents the
client synced, and edits applied with `workspace/applyEdit` as one annotated change."""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from baton import protocol as p
from baton.core.tools.host import (
    CHANGED_MEANWHILE,
    OPTION_LABELS,
    EditOutcome,
    FileEdit,
    PermissionOutcome,
    PermissionRequest,
    cannot_read,
    current_text,
)
from baton.core.workspace.editor_files import path_to_uri
from baton.lsp.features.unreported_edits import Document, Unreported
from baton.lsp.session_document.markdown import code_units

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)
ANNOTATION = "baton-edit"
_BREAK = re.compile(r"\r\n|\r|\n")
_ids = itertools.count(1)


def _get(obj: Any, *path: str) -> Any:
    for name in path:
        obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def lsp_position(text: str, offset: int, encoding: str = "utf-16") -> types.Position:
    """The LSP position of a character offset of `text`, its character counted in the
    position encoding the client and server agreed on; lines break at \\n, \\r\\n and \\r,
    as LSP says (a file of lone \\r lines is no single line)."""
    before = text[:offset]
    line = start = 0
    for found in _BREAK.finditer(before):
        line, start = line + 1, found.end()
    return types.Position(line=line, character=code_units(before[start:], encoding))


def _common(limit: int, same: Callable[[int, int], bool]) -> int:
    """The length (at most `limit`) of the common run `same(low, high)` tells of: whether
    positions low..high of both texts agree, asked only once all before `low` do. Halving
    compares slices at C speed: one character at a time, a 5 MB file held the event loop
    about 1.7 s."""
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if same(low, mid):
            low = mid
        else:
            high = mid - 1
    return low


def minimal_edit(before: str, after: str, encoding: str = "utf-16") -> tuple[types.Range, str]:
    """The one range of `before` to replace (common head and tail kept) and its new text,
    its positions in `encoding`."""
    limit = min(len(before), len(after))
    head = _common(limit, lambda low, high: before[low:high] == after[low:high])
    b_end, a_end = len(before), len(after)
    tail = _common(
        limit - head,
        lambda low, high: before[b_end - high : b_end - low] == after[a_end - high : a_end - low],
    )
    # never between the \r and \n of a line end: no position names that place
    if 0 < head < len(before) and before[head - 1 : head + 1] == "\r\n":
        head -= 1
    stop = len(before) - tail
    if tail and 0 < stop < len(before) and before[stop - 1 : stop + 1] == "\r\n":
        tail -= 1
    start = lsp_position(before, head, encoding)
    end = lsp_position(before, len(before) - tail, encoding)
    return types.Range(start=start, end=end), after[head : len(after) - tail]


def _no_bom(text: str) -> str:
    """`text` as an editor's document holds it: a UTF-8 byte order mark is the file's
    encoding to VS Code and Neovim, never a character (a column) of its first line."""
    return text.removeprefix("\ufeff")


class LspToolHost:
    def __init__(self, ls: BatonServer) -> None:
        self.ls = ls
        caps = getattr(ls.protocol, "client_capabilities", None)
        self.can_ask = bool(_get(caps, "experimental", "baton", p.TOOL_PERMISSION_CAPABILITY))
        self.can_apply = bool(_get(caps, "workspace", "apply_edit"))
        edits = _get(caps, "workspace", "workspace_edit")
        operations = {str(getattr(k, "value", k)) for k in _get(edits, "resource_operations") or []}
        self.can_create = "create" in operations
        # resource operations only exist in documentChanges: a client that takes them reads it
        self.document_changes = bool(_get(edits, "document_changes")) or bool(operations)

    async def ask_permission(self, request: PermissionRequest) -> PermissionOutcome:
        params = p.ToolPermissionParams(
            session_id=request.session_id,
            tool_use_id=request.tool_use_id,
            tool=request.tool,
            input=request.input,
            title=request.title,
            kind=request.kind,
            path=request.path,
            diff=request.diff,
            options=[p.ToolPermissionOption(id=o, label=OPTION_LABELS[o]) for o in request.options],
        )
        msg_id = f"baton-permission-{request.tool_use_id}-{next(_ids)}"
        future = self.ls.protocol.send_request_async(p.TOOL_PERMISSION, params.wire(), msg_id)
        try:
            raw = await asyncio.shield(future)  # its answer may still come: pygls expects it
        except asyncio.CancelledError:
            # the send was cancelled: the client withdraws its prompt
            self.ls.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        except Exception as exc:  # an error answer counts as deny
            log.info("tool permission answered with an error: %s", type(exc).__name__)
            return "deny"
        outcome = _get(raw, "outcome")
        return outcome if outcome in request.options else "deny"

    async def read_text(self, path: Path) -> str | None:
        found = self.ls.service.tool_setup.open_document(path)
        held = self.ls.unreported_edits.held(path, found)
        if held is not None:
            return held.text  # an edit the editor applied and has not reported yet
        return found[0] if found is not None else None

    async def open_texts(self) -> dict[Path, str]:
        """The editor's text of each file it has open, or an edit of which it has not
        reported yet."""
        texts = dict(self.ls.service.tool_setup.open_documents())
        for path in self.ls.unreported_edits.paths():
            text = await self.read_text(path)
            if text is not None:
                texts[path] = text
        return texts

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        if not self.can_apply:
            return EditOutcome(False, "this editor cannot apply edits (no workspace/applyEdit)")
        uri = path_to_uri(edit.path)
        document = self.ls.service.tool_setup.open_document(edit.path)
        held = self.ls.unreported_edits.held(edit.path, document)
        if held is not None:
            current: str | None = held.text
        elif document is not None:
            current = document[0]
        else:
            try:
                current = current_text(edit.path)
            except (OSError, UnicodeDecodeError) as exc:
                return EditOutcome(False, cannot_read(exc))
        if current != edit.before:
            return EditOutcome(False, CHANGED_MEANWHILE)
        # the version the editor has since an edit it has not reported is unknown: none is
        # sent (the client applies the edit to the text it has, which `held.text` is)
        version = document[1] if document is not None and held is None else None
        params = types.ApplyWorkspaceEditParams(
            edit=self._workspace_edit(uri, version, edit, from_disk=document is None),
            label=f"Baton: {edit.title}",
        )
        mark = self.ls.unreported_edits.reports(edit.path)
        try:
            result = await self.ls.workspace_apply_edit_async(params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return EditOutcome(False, f"the editor did not apply it ({type(exc).__name__})")
        if result is not None and result.applied:
            self._applied(edit, document, held, current, mark)
            return EditOutcome(True)
        reason = getattr(result, "failure_reason", None) or "the user or the editor refused it"
        return EditOutcome(False, f"refused: {reason}")

    def _applied(
        self,
        edit: FileEdit,
        document: Document | None,
        held: Unreported | None,
        seen: str | None,
        mark: int,
    ) -> None:
        """Keep what the editor holds now, until it reports the file: the text the server
        knew of it stays the basis (a file not open: the disk's, empty once a CreateFile
        made it)."""
        if held is not None:
            disk = held.disk
        elif document is not None:
            disk = None
        else:
            disk = "" if seen is None and self._creates() else seen
        self.ls.unreported_edits.applied(edit.path, Unreported(document, disk, edit.after), mark)

    def _creates(self) -> bool:
        """Whether a new file's edit goes with a CreateFile (the file made empty on disk)."""
        return self.document_changes and self.can_create

    def _workspace_edit(
        self, uri: str, version: int | None, edit: FileEdit, from_disk: bool
    ) -> types.WorkspaceEdit:
        """The edit as the client can take it: one annotated TextDocumentEdit, a CreateFile
        first for a new file when the client takes resource operations (one that does not
        gets the text inserted into the file it names: an editor may open it as a new
        buffer, or refuse), or the plain `changes` of a client that declares no
        documentChanges (which then shows no review: annotations live in documentChanges)."""
        if edit.before is None:
            where, text = types.Range(types.Position(0, 0), types.Position(0, 0)), edit.after
        elif from_disk:  # the disk's text: the editor's document has no BOM
            where, text = minimal_edit(
                _no_bom(edit.before), _no_bom(edit.after), self.ls.position_encoding
            )
        else:
            where, text = minimal_edit(edit.before, edit.after, self.ls.position_encoding)
        if not self.document_changes:
            return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=where, new_text=text)]})
        changes: list[Any] = []
        if edit.before is None and self._creates():
            changes.append(types.CreateFile(uri=uri, annotation_id=ANNOTATION))
        target = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        annotated = types.AnnotatedTextEdit(range=where, new_text=text, annotation_id=ANNOTATION)
        changes.append(types.TextDocumentEdit(text_document=target, edits=[annotated]))
        review = self.ls.service.tool_setup.review_edits()
        annotation = types.ChangeAnnotation(label=f"Baton: {edit.title}", needs_confirmation=review)
        return types.WorkspaceEdit(
            document_changes=changes, change_annotations={ANNOTATION: annotation}
        )
