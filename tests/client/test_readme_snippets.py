"""The README's client snippets work as written, in the real editors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from test_neovim import nvim_binary

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
    assert re.fullmatch(r"ctx \d+% \(\d+ left\)", result["meter"]), result["meter"]
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
