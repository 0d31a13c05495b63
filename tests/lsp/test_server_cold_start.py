"""A cold start answers `initialize` before pydantic, the wire models and core are imported;
the requests that follow find them loaded, and the answer advertises the same as ever."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsp_harness import server_env
from test_server_malformed import RawPipe

from baton import __version__
from baton import protocol as p

HEAVY = (
    "pydantic",
    "pydantic_core",
    "baton.protocol",
    "baton.contract.params",
    "baton.contract.answers",
    "baton.contract.server_sent",
    "baton.core.conversation.messages",
    "baton.core.conversation.session",
    "baton.core.settings",
    "baton.core.settings_sections",
    "baton.core.service.service",
    "baton.lsp.backend",
    "baton.lsp.dispatch.routes",
)

# `python -m baton serve` itself; each message it writes to the client is noted in the
# report with the HEAVY modules imported at that moment
OBSERVED = """
import json, runpy, sys
import pygls.io_

report, heavy = open(sys.argv[1], "w", encoding="utf-8"), tuple(sys.argv[2].split(","))
write = pygls.io_.StdoutWriter.write

def observed(self, data):
    message = json.loads(data.split(b"\\r\\n\\r\\n", 1)[1])
    loaded = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
    note = {"id": message.get("id"), "method": message.get("method"), "heavy": loaded}
    report.write(json.dumps(note) + "\\n")
    report.flush()
    return write(self, data)

pygls.io_.StdoutWriter.write = observed
sys.argv = ["baton", "serve"]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


def frame(msg_id: int | None, method: str, params: Any = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if msg_id is not None:
        body["id"] = msg_id
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


LITERALS = {"codeActionKind": {"valueSet": ["source", "refactor.rewrite"]}}
CAPABILITIES = {"textDocument": {"codeAction": {"codeActionLiteralSupport": LITERALS}}}
INITIALIZE = {"processId": None, "rootUri": None, "capabilities": CAPABILITIES}


async def observed_server(tmp_path: Path) -> tuple[RawPipe, Path]:
    report = tmp_path / "report.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        OBSERVED,
        str(report),
        ",".join(HEAVY),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(tmp_path / "data"),
    )
    return RawPipe(process), report


async def stop(pipe: RawPipe) -> None:
    await pipe.send({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
    await pipe.response(99)
    await pipe.send({"jsonrpc": "2.0", "method": "exit"})
    await asyncio.wait_for(pipe.process.wait(), 10)


def answers(report: Path) -> dict[int, list[str]]:
    """The heavy modules loaded when each response was written, by request id."""
    notes = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    return {n["id"]: n["heavy"] for n in notes if n["method"] is None and n["id"] is not None}


async def test_initialize_is_answered_before_the_models_and_core_are_imported(
    tmp_path: Path,
) -> None:
    pipe, report = await observed_server(tmp_path)
    await pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
    init = (await pipe.response(1))["result"]
    assert init["serverInfo"] == {"name": "baton", "version": __version__}
    capabilities = init["capabilities"]
    assert capabilities["executeCommandProvider"]["commands"] == list(p.COMMANDS)
    assert capabilities["codeActionProvider"]["codeActionKinds"] == ["source", "refactor.rewrite"]
    assert capabilities["hoverProvider"] is True
    assert capabilities["textDocumentSync"]["change"] == 2
    # the contract's version, which the VS Code extension checks the server against
    assert capabilities["experimental"] == {"baton": {"contractVersion": p.CONTRACT_VERSION}}
    await pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    await pipe.send({"jsonrpc": "2.0", "id": 2, "method": p.SESSION_LIST, "params": {}})
    assert (await pipe.response(2))["result"] == {"sessions": []}
    await stop(pipe)

    loaded = answers(report)
    assert loaded[1] == []
    # the same observation sees them once a request needed them
    assert {
        "pydantic",
        "baton.protocol",
        "baton.core.conversation.messages",
        "baton.core.service.service",
    } <= set(loaded[2])


async def test_requests_sent_with_initialize_wait_for_what_they_need(tmp_path: Path) -> None:
    """A client that does not wait for the answer (all in one write) still gets answers
    from a loaded server: its settings applied first, every request served."""
    pipe, report = await observed_server(tmp_path)
    options = {"contextWindow": 50_000}
    assert pipe.process.stdin is not None
    pipe.process.stdin.write(
        frame(1, "initialize", {**INITIALIZE, "initializationOptions": options})
        + frame(None, "initialized", {})
        + frame(2, p.SESSION_CREATE, {"title": "cold"})
    )
    await pipe.process.stdin.drain()
    assert "capabilities" in (await pipe.response(1))["result"]
    created = (await pipe.response(2))["result"]
    assert created["title"] == "cold"
    await pipe.send({"jsonrpc": "2.0", "id": 3, "method": p.USAGE, "params": created})
    usage = (await pipe.response(3))["result"]
    assert usage["contextWindow"] == 50_000  # initialize's settings reached the service
    await stop(pipe)
    assert answers(report)[1] == []
