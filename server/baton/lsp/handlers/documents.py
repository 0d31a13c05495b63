"""Documents: editor files feed the restore rules; session documents get actions and hovers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from baton import protocol as p
from baton.lsp.code_actions import KINDS, compact_actions, kind_name
from baton.lsp.errors import guarded
from baton.lsp.handlers.common import Call, NotificationHandler
from baton.lsp.hover import message_hover, usage_hover
from baton.lsp.render import USAGE_LINE, Section

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer


def _is_file(uri: str) -> bool:
    return uri.startswith("file:")


def active_editor(call: Call, args: p.ActiveEditorParams) -> None:
    """`baton/activeEditor`: the focused editor feeds the restore rules (files only)."""
    uri = args.uri
    call.service.editor_files.focused(uri if uri and _is_file(uri) else None)


NOTIFICATIONS: dict[str, NotificationHandler] = {p.ACTIVE_EDITOR: active_editor}


def register(ls: BatonServer) -> None:
    """The standard LSP document features (the custom ones dispatch from protocol.py)."""
    files = ls.service.editor_files

    def text_of(uri: str) -> str | None:
        document = ls.workspace.text_documents.get(uri)
        return document.source if document is not None else None

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if _is_file(document.uri):
            files.opened(document.uri, document.text, document.version)
            return
        session_id = p.session_id_from_uri(document.uri)
        if session_id is not None:
            # a server started after the session's last change has published nothing yet
            ls.documents.schedule(session_id)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        # pygls has already applied the (full or incremental) change to its copy
        uri = params.text_document.uri
        text = text_of(uri)
        if _is_file(uri) and text is not None:
            files.changed(uri, text, params.text_document.version)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _is_file(uri):
            files.saved(uri, params.text if params.text is not None else text_of(uri))

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        if _is_file(params.text_document.uri):
            files.closed(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    @guarded
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        session_id = p.session_id_from_uri(params.text_document.uri)
        if session_id is None:
            return None
        rendered, data, _ = ls.documents.render(session_id)
        only = [kind_name(k) for k in params.context.only] if params.context.only else None
        return compact_actions(session_id, rendered, params.range, data.last_boundary_id, only)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded
    async def hover(params: types.HoverParams) -> types.Hover | None:
        session_id = p.session_id_from_uri(params.text_document.uri)
        if session_id is None:
            return None
        rendered, data, _ = ls.documents.render(session_id)
        line = params.position.line
        if line == USAGE_LINE:
            preview, reason = await ls.service.preview_auto(session_id)
            plan = None
            if preview is not None:
                plan = (preview.summarized_message_ids, preview.kept_message_ids)
            by_id = {m.id: m for m in data.messages}
            text = usage_hover(data.usage, plan, by_id, reason)
            width = rendered.usage_line_width
            return _hover(text, Section("", USAGE_LINE, USAGE_LINE, width))
        section = rendered.section_at(line)
        if section is None:
            return None
        message = next((m for m in data.messages if m.id == section.message_id), None)
        if message is None:  # the line belongs to a rendering the view has since left
            return None
        return _hover(message_hover(message, data.usage), section)


def _hover(text: str, section: Section) -> types.Hover:
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=types.Range(
            start=types.Position(line=section.start_line, character=0),
            end=types.Position(line=section.end_line, character=section.end_character),
        ),
    )
