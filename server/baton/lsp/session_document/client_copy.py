"""The copies of a session document a client holds: whether the positions it sends are in
the rendering the server made (the same lines, whatever its line ends)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contract.names import session_id_from_uri

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer
    from baton.lsp.session_document.render import RenderedSession


def held_as_rendered(ls: BatonServer, session_id: str, rendered: RenderedSession) -> bool:
    """Whether the positions the client sends are in `rendered`: it holds no copy of
    the document (never opened it, under any spelling of its URI), or holds that text,
    with its line ends as it keeps them (Neovim sends a Windows buffer with CRLF: the
    same lines and columns). In an older copy (the session changed since the client
    last read it) the same lines belong to other messages."""
    try:
        documents = ls.workspace.text_documents
    except RuntimeError:  # before initialize: no client copy yet
        return True
    held = [d.source for uri, d in documents.items() if session_id_from_uri(uri) == session_id]
    return all(_same_lines(text, rendered.text) for text in held)


def _same_lines(held: str, rendered: str) -> bool:
    """Whether a client's copy is the rendering, its line ends aside."""
    if held == rendered:
        return True
    return "\r\n" in held and held.replace("\r\n", "\n") == rendered
