"""Documents: editor files feed the restore rules; session documents get actions and hovers.

The standard LSP document features, registered with the rest (lsp/dispatch/registry.py)
while the server answers `initialize`: their options are part of its capabilities. What
they do is loaded at their first call (see lsp/backend.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from baton.contract import names
from baton.core.errors import BatonError
from baton.lsp.dispatch.registry import Feature
from baton.lsp.session_document import off_loop
from baton.lsp.session_document.action_refusals import offered
from baton.lsp.session_document.client_copy import held_as_rendered
from baton.lsp.session_document.code_actions import KINDS, Refusals, compact_actions, kind_name

if TYPE_CHECKING:
    from baton.core.conversation.session import Session
    from baton.lsp.server import BatonServer


def is_file(uri: str) -> bool:
    return uri.startswith("file:")


def _text_of(ls: BatonServer, uri: str) -> str | None:
    document = ls.workspace.text_documents.get(uri)
    return document.source if document is not None else None


def did_open(ls: BatonServer, params: types.DidOpenTextDocumentParams) -> None:
    document = params.text_document
    if is_file(document.uri):
        ls.unreported_edits.reported(document.uri)
        ls.service.editor_files.opened(document.uri, document.text, document.version)
        return
    session_id = names.session_id_from_uri(document.uri)
    if session_id is not None:
        # a server started after the session's last change has published nothing yet
        ls.documents.schedule(session_id)


def did_change(ls: BatonServer, params: types.DidChangeTextDocumentParams) -> None:
    # pygls has already applied the (full or incremental) change to its copy
    uri = params.text_document.uri
    text = _text_of(ls, uri)
    if is_file(uri) and text is not None:
        ls.unreported_edits.reported(uri)
        ls.service.editor_files.changed(uri, text, params.text_document.version)


def did_save(ls: BatonServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_file(uri):
        text = params.text if params.text is not None else _text_of(ls, uri)
        ls.service.editor_files.saved(uri, text)


def did_close(ls: BatonServer, params: types.DidCloseTextDocumentParams) -> None:
    if is_file(params.text_document.uri):
        ls.unreported_edits.reported(params.text_document.uri)
        ls.service.editor_files.closed(params.text_document.uri)


async def code_action(
    ls: BatonServer, params: types.CodeActionParams
) -> list[types.CodeAction] | list[types.Command] | None:
    session_id = names.session_id_from_uri(params.text_document.uri)
    if session_id is None:
        return None
    rendered, data, _ = await off_loop.rendered(ls, session_id)
    only = [kind_name(k) for k in params.context.only] if params.context.only else None
    # a range in the client's older copy names no message here: only the actions for none
    selection = params.range if held_as_rendered(ls, session_id, rendered) else None
    locked = _refused(data.session)
    last = data.last_boundary_id
    last_direction = data.session.boundaries[last].direction if last is not None else None
    media = _media(ls, data.session)

    def offer(refusals: Refusals) -> list[types.CodeAction]:
        # each action is asked as its command would ask: planned, or the undo checked
        return compact_actions(
            session_id, rendered, selection, last, only, locked, refusals, last_direction, media
        )

    actions = await offered(ls, session_id, offer)  # what is not known made off the loop
    text_document = getattr(ls.client_capabilities, "text_document", None)
    asked = getattr(text_document, "code_action", None)
    if not getattr(asked, "disabled_support", None):
        # an action that would fail is left out for a client that cannot grey it out
        actions = [action for action in actions if action.disabled is None]
    if getattr(asked, "code_action_literal_support", None) is None:
        # a client without literal support takes commands alone (LSP 3.17)
        return [action.command for action in actions if action.command is not None]
    return actions


def _media(ls: BatonServer, session: Session) -> tuple[str, str] | None:
    """While the session's request is over the API's 32 MB: the last message holding an
    image or a document, and what they are ("7 images"), for the compaction up to it."""
    from baton.core.conversation.request_bytes import media_pivot  # loaded after initialize
    from baton.core.usage.wording import held

    size = ls.service.usage(session.session_id).request_size
    if size is None or not size.over:
        return None
    pivot = media_pivot(session.view_messages())
    return (pivot, held(size)) if pivot is not None else None


def _refused(session: Session) -> str | None:
    """Why a change to `session` would be refused (held by another server, a damaged
    header, a data dir Baton may not write), or None."""
    try:
        session.refuse_if_read_only()
    except BatonError as exc:
        return exc.message
    return None


async def hover(ls: BatonServer, params: types.HoverParams) -> types.Hover | None:
    session_id = names.session_id_from_uri(params.text_document.uri)
    if session_id is None:
        return None
    from baton.lsp.session_document.hover import hover_at  # loaded after initialize

    return await hover_at(ls, session_id, params.position.line)


FEATURES = (
    Feature(types.TEXT_DOCUMENT_DID_OPEN, did_open),
    Feature(types.TEXT_DOCUMENT_DID_CHANGE, did_change),
    Feature(types.TEXT_DOCUMENT_DID_SAVE, did_save, types.SaveOptions(include_text=False)),
    Feature(types.TEXT_DOCUMENT_DID_CLOSE, did_close),
    Feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        code_action,
        types.CodeActionOptions(code_action_kinds=KINDS),
    ),
    Feature(types.TEXT_DOCUMENT_HOVER, hover),
)
