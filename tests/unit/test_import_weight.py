"""The contract's table loads without the Messages API's SDK: every server start and every
`--json` answer reads it, and the SDK alone takes over a second to import; only a summary
or a reply needs it. Nor does the server hold a turn's workspace tools or the importer
before a request uses them (bench P5: the peak RSS with a large session open)."""

from __future__ import annotations

import subprocess
import sys


def test_the_contract_loads_without_the_anthropic_sdk() -> None:
    code = "import sys, baton.protocol, baton.lsp.backend; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# what a server that opens, counts and compacts sessions never runs: a turn's workspace
# tools (their file walk and ignore rules, edits and diffs) and the Claude Code importer
# load with the first request that uses them
LOADED_ON_USE = (
    "baton.core.tools.attachments",
    "baton.core.tools.display",
    "baton.core.tools.workspace",
    "baton.core.turn.tool_loop",
    "baton.core.importers.claude_code",
    "pathspec",
    "difflib",
)


def test_the_server_loads_without_the_workspace_tools_or_the_importer() -> None:
    code = (
        "import sys, baton.lsp.server, baton.lsp.backend, baton.lsp.dispatch.routes\n"
        f"print(sorted(m for m in {LOADED_ON_USE!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
