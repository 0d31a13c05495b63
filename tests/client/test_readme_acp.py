"""The README's agent-panel snippets for Zed and JetBrains start an agent that answers as
written: the command and args they name, on this environment's PATH, speak ACP."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from acp import spawn_agent_process, text_block

from baton_testkit.acp_client import Recorder

ROOT = Path(__file__).resolve().parents[2]


def json_block(heading: str) -> dict[str, object]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Agent panels", 1)[1].split(heading, 1)[1]
    found = re.search(r"```json\n(.*?)```", section, re.S)
    assert found, f"no json block after {heading}"
    parsed: dict[str, object] = json.loads(found.group(1))
    return parsed


@pytest.mark.parametrize("heading", ["Zed, in", "JetBrains IDEs"])
async def test_the_readme_agent_server_entry_starts_baton_acp(heading: str, tmp_path: Path) -> None:
    servers = json_block(heading)["agent_servers"]
    assert isinstance(servers, dict)
    entry = servers["Baton"]
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "BATON_DATA_DIR": str(tmp_path / "data"),
        **entry.get("env", {}),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    recorder = Recorder()
    with open(tmp_path / "stderr", "wb") as stderr:
        async with spawn_agent_process(
            recorder,
            entry["command"],
            *entry["args"],
            env=env,
            transport_kwargs={"stderr": stderr},
            observers=[recorder.observe],
        ) as (conn, _process):
            init = await conn.initialize(protocol_version=1)
            assert init.agent_info is not None and init.agent_info.name == "baton"
            sid = (await conn.new_session(cwd=str(tmp_path))).session_id
            answer = await conn.prompt(session_id=sid, prompt=[text_block("/context")])
            assert answer.stop_reason == "end_turn"
            said = recorder.updates(sid, "agent_message_chunk")
            assert said and "Messages" in said[-1]["content"]["text"]
