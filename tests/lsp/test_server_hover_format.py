"""Hovers on a session document in the format the client reads (`hover.contentFormat`)."""

from __future__ import annotations

from typing import Any

import pytest
from lsp_harness import VSCODE, Harness, assistant, user
from lsprotocol import types
from pytest_lsp import client_capabilities

from baton import protocol

PLAIN, MARKDOWN = types.MarkupKind.PlainText, types.MarkupKind.Markdown


def reading(formats: list[types.MarkupKind] | None) -> types.ClientCapabilities:
    caps = client_capabilities(VSCODE)
    assert caps.text_document is not None
    caps.text_document.hover = types.HoverClientCapabilities(content_format=formats)
    return caps


async def hovers(lsp: Harness) -> list[types.MarkupContent]:
    """The hovers on the usage line and on the first message's heading."""
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, user("hi"), assistant("hello"))
    line = (await lsp.render(sid))["messages"][0]["range"]["start"]["line"]
    found = []
    for at in (0, line):
        hover = await lsp.request(
            types.TEXT_DOCUMENT_HOVER,
            {
                "textDocument": {"uri": protocol.session_uri(sid)},
                "position": {"line": at, "character": 0},
            },
        )
        assert isinstance(hover.contents, types.MarkupContent)
        found.append(hover.contents)
    return found


@pytest.mark.parametrize(
    ("formats", "kind"),
    [([PLAIN, MARKDOWN], MARKDOWN), ([MARKDOWN], MARKDOWN), (None, MARKDOWN), ([PLAIN], PLAIN)],
)
async def test_hovers_come_in_a_format_the_client_reads(
    start_server: Any, formats: list[types.MarkupKind] | None, kind: types.MarkupKind
) -> None:
    lsp = await start_server(capabilities=reading(formats))
    usage, message = await hovers(lsp)
    assert usage.kind == kind and message.kind == kind
    if kind == PLAIN:  # Emacs's eglot without markdown-mode: no marks shown as they are
        assert "**" not in usage.value + message.value and "`" not in message.value
        assert message.value.startswith("user message msg_")
    else:
        assert message.value.startswith("**user message** `msg_")
