"""`baton demo`, the README's main command, tells the whole story with no API key."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("key", [None, " \n"], ids=["no key", "white space alone"])
def test_the_demo_compacts_up_to_a_message_restores_files_and_undoes_it(key: str | None) -> None:
    """A key of white space alone is no key, to the demo as to the server: the demo said
    the model would summarize (ANTHROPIC_API_KEY is set) while the server had no key."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    done = subprocess.run(
        [sys.executable, "-m", "baton", "demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "offline extractive" in out
    assert "context-usage" in out and "Context " in out
    for title in ("Compact conversation", "Compact up to here", "Compact from here"):
        assert f"- {title}" in out
    assert "extractive summarizer:" in out and "summarized" in out
    assert "app.py" in out.split("restored files:")[1].split("summary head:")[0]
    assert "## 1. Primary request and intent" in out
    assert "identical to before: True" in out
