"""Documents: editor files feed the restore rules; session documents get actions and hovers.

Registered while the server answers `initialize`: the features' options are part of its
capabilities. What they do is loaded at their first call (see lsp/backend.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from baton.contract import names
from baton.lsp.dispatch.errors import guarded
from baton.lsp.session_document.code_actions import KINDS, compact_actions, kind_name

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer


def is_file(uri: str) -> bool:
    return uri.startswith("file:")


def register(ls: BatonServer) -> None:
    """The standard LSP document features (the custom ones dispatch from protocol.py)."""

    def text_of(uri: str) -> str | None:
        document = ls.workspace.text_documents.get(uri)
        return document.source if document is not None else None

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if is_file(document.uri):
            ls.service.editor_files.opened(document.uri, document.text, document.version)
            return
        session_id = names.session_id_from_uri(document.uri)
        if session_id is not None:
            # a server started after the session's last change has published nothing yet
            ls.documents.schedule(session_id)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        # pygls has already applied the (full or incremental) change to its copy
        uri = params.text_document.uri
        text = text_of(uri)
        if is_file(uri) and text is not None:
            ls.service.editor_files.changed(uri, text, params.text_document.version)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if is_file(uri):
            text = params.text if params.text is not None else text_of(uri)
            ls.service.editor_files.saved(uri, text)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        if is_file(params.text_document.uri):
            ls.service.editor_files.closed(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    @guarded
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        session_id = names.session_id_from_uri(params.text_document.uri)
        if session_id is None:
            return None
        rendered, data, _ = ls.documents.render(session_id)
        only = [kind_name(k) for k in params.context.only] if params.context.only else None
        return compact_actions(session_id, rendered, params.range, data.last_boundary_id, only)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded
    async def hover(params: types.HoverParams) -> types.Hover | None:
        session_id = names.session_id_from_uri(params.text_document.uri)
        if session_id is None:
            return None
        from baton.lsp.session_document.hover import (
            hover_at,  # the renderings' code, loaded after initialize
        )

        return await hover_at(ls, session_id, params.position.line)
