"""`baton demo`, the README's main command, tells the whole story with no API key."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from baton_testkit.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-0123456789abcdefghij"


@pytest.mark.parametrize("key", [None, " \n"], ids=["no key", "white space alone"])
def test_the_demo_compacts_up_to_a_message_restores_files_and_undoes_it(key: str | None) -> None:
    """A key of white space alone is no key, to the demo as to the server: the demo said
    the model would summarize (ANTHROPIC_API_KEY is set) while the server had no key."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    done = _demo(env)
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


def test_the_demo_says_when_its_summary_waits_to_ask_the_api_again(
    fake_anthropic: FakeAnthropic,
) -> None:
    """A rate limit on the summary's request: the demo sat silent through the wait."""
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="1")
    fake_anthropic.reply("<summary>The user asked for a date parser.</summary>")
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    done = _demo(env)
    assert done.returncode == 0, done.stderr
    wait = "   Rate limited by the API: trying again in 1 s (attempt 2 of 3)\n"
    step, _, result = done.stdout.partition(wait)
    assert step.endswith('Run "Compact up to here" (workspace/executeCommand)\n'), done.stdout
    assert "The user asked for a date parser." in result


def _demo(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`baton demo` run to its end in a process of its own, with `env`."""
    return subprocess.run(
        [sys.executable, "-m", "baton", "demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
