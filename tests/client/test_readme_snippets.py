"""The README's client snippets work as written, in the real editors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_neovim import nvim_binary

from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("readme_neovim_driver.lua")
EMACS_DRIVER = Path(__file__).with_name("readme_emacs_driver.el")


def readme_block(heading: str, language: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found, f"no {language} block under {heading}"
    return found.group(1)


def editor_env() -> dict[str, str]:
    """The environment an editor runs in: this one, with this Python's `baton` first on PATH."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }


def run_editor(
    command: list[str], env: dict[str, str], workspace: Path
) -> subprocess.CompletedProcess[str]:
    """A headless editor run of a README snippet's driver, in the workspace, in two minutes."""
    return subprocess.run(
        command, env=env, cwd=workspace, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_readme_neovim_config_attaches_shows_the_meter_and_compacts(tmp_path: Path) -> None:
    init = tmp_path / "init.lua"
    init.write_text(readme_block("### Neovim (0.11+)", "lua"), encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").mkdir()  # the snippet's root marker
    env = {
        **editor_env(),
        "BATON_INIT": str(init),
        "BATON_RESULT": str(tmp_path / "result.json"),
        "BATON_WORKSPACE": str(workspace),
        "BATON_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    done = run_editor([nvim_binary(), "--headless", "--clean", "-l", str(DRIVER)], env, workspace)
    result_file = tmp_path / "result.json"
    assert result_file.exists(), done.stderr[-2000:]
    result = json.loads(result_file.read_text())
    assert result["ok"], (result, done.stderr[-2000:])
    # the server's meter words, "~" before a figure no reply has confirmed yet
    assert re.fullmatch(r"ctx ~?\d+% [\d.]+[KM]?/[\d.]+[KM]?", result["meter"]), result["meter"]
    assert re.fullmatch(r"compacted: \d+ -> \d+ tokens", result["notice"]), result["notice"]


def test_the_readme_eglot_config_attaches_and_compacts(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    assert emacs, "Emacs is missing: scripts/test installs emacs-nox and elpa-eglot"
    snippet = tmp_path / "baton.el"
    snippet.write_text(readme_block("### Emacs (eglot)", "elisp"), encoding="utf-8")
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)  # a project root for eglot
    result = tmp_path / "messages.txt"
    env = {
        **editor_env(),
        "BATON_SNIPPET": str(snippet),
        "BATON_WORKSPACE": str(workspace),
        "BATON_RESULT": str(result),
        "BATON_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path),
    }
    done = run_editor([emacs, "--batch", "-l", str(EMACS_DRIVER)], env, workspace)
    assert done.returncode == 0 and result.exists(), done.stderr[-2000:]
    messages = result.read_text(encoding="utf-8")
    assert "[eglot] Connected!" in messages
    assert re.search(r"^compacted: \d+ -> \d+ tokens$", messages, re.M), messages
    # eglot without markdown-mode reads hovers as plain text: no Markdown marks in them
    assert "hover-kind: plaintext" in messages, messages
    assert re.search(r"^hover-heading: \w+ \w+ [\w-]+$", messages, re.M), messages


@pytest.mark.parametrize(
    "first_line",
    # Neovim agrees on utf-8 positions: a line past ASCII puts columns apart
    ["def {}(s):", 's = "😀 café"; {}(s)'],
)
def test_the_readme_neovim_config_answers_a_tool_permission_and_applies_the_edit(
    tmp_path: Path, fake_anthropic: FakeAnthropic, first_line: str
) -> None:
    init = tmp_path / "init.lua"
    init.write_text(readme_block("### Neovim (0.11+)", "lua"), encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    rename = {
        "command": "str_replace",
        "path": "utils.py",
        "old_str": "parse_date",
        "new_str": "parse_day",
    }
    fake_anthropic.reply(
        tool_use_block("str_replace_based_edit_tool", rename), stop_reason="tool_use"
    )
    fake_anthropic.reply("Renamed it.")
    env = {
        **editor_env(),
        "ANTHROPIC_API_KEY": "sk-ant-test-0123456789abcdefghij",
        "ANTHROPIC_BASE_URL": fake_anthropic.base_url,
        "BATON_INIT": str(init),
        "BATON_RESULT": str(tmp_path / "result.json"),
        "BATON_WORKSPACE": str(workspace),
        "BATON_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "BATON_LINES": json.dumps([first_line.format("parse_date"), "    return s"]),
    }
    driver = Path(__file__).with_name("neovim_tools_driver.lua")
    done = run_editor([nvim_binary(), "--headless", "--clean", "-l", str(driver)], env, workspace)
    result_file = tmp_path / "result.json"
    assert result_file.exists(), done.stderr[-2000:]
    result = json.loads(result_file.read_text())
    assert result["ok"], (result, done.stderr[-2000:])
    assert result["reply"] == "Renamed it."
    (asked,) = result["asked"]
    assert asked.startswith("Edit utils.py (+1 -1)\n\n--- a/utils.py")
    # Neovim applied the edit natively: the buffer changed (unsaved), the disk did not
    assert result["buffer"] == [first_line.format("parse_day"), "    return s"]
    assert result["modified"] is True
    assert result["disk"] == [first_line.format("parse_date"), "    return s"]
    told = fake_anthropic.message_requests()[1].body["messages"][-1]["content"][0]
    assert told["content"] == "Applied: Edit utils.py (+1 -1) at line 1."
