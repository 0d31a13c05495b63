"""The contract's table loads without the Messages API's SDK: every server start and every
`--json` answer reads it, and the SDK alone takes over a second to import; only a summary
or a reply needs it."""

from __future__ import annotations

import subprocess
import sys


def test_the_contract_loads_without_the_anthropic_sdk() -> None:
    code = "import sys, baton.protocol, baton.lsp.backend; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
