"""The baseline: a bare pygls 2 server with one custom request, spawned like Baton's."""

from __future__ import annotations

from typing import Any

from pygls.lsp.server import LanguageServer

PING = "bench/ping"

server = LanguageServer("bare-pygls", "1")


@server.feature(PING)
def ping(ls: LanguageServer, params: Any) -> dict[str, Any]:
    # about the size of a Usage answer, so both sides carry a similar payload
    return {"sessionId": "bench", "tokens": 1234, "window": 1_000_000, "percent": 0.1}


if __name__ == "__main__":
    server.start_io()
