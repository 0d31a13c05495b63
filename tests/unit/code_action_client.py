"""A server that takes code actions as a client that asked for them would have it."""

from __future__ import annotations

from lsprotocol import types

from baton.lsp.server import BatonServer


def taking_code_actions(server: BatonServer) -> BatonServer:
    """`server` with the client capabilities initialize leaves it: a client that takes
    code actions, greyed out ones too."""
    literal = types.ClientCodeActionLiteralOptions(
        code_action_kind=types.ClientCodeActionKindOptions(value_set=[])
    )
    asked = types.CodeActionClientCapabilities(
        code_action_literal_support=literal, disabled_support=True
    )
    capabilities = types.TextDocumentClientCapabilities(code_action=asked)
    server.protocol.client_capabilities = types.ClientCapabilities(text_document=capabilities)
    return server
