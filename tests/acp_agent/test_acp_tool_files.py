"""What the workspace tools never ask an ACP client to read: a path that is no regular
file (a FIFO, a folder) or one over the size a tool reads. The client reads what it is
asked (`fs/read_text_file` of a FIFO waits for a writer that never comes; of a 6 MB log
sends it whole), so the disk's rules come first, and the model is told why."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from acp.schema import ReadTextFileResponse

from baton.core.tools.host import MAX_FILE_BYTES
from baton_testkit.acp_client import Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block


class Reading(Recorder):
    """A client that notes each path it is asked to read and answers with a text of its
    own, without touching the disk (where the FIFO would block the test)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.reads: list[str] = []

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content="the editor's text\n")


async def test_a_fifo_a_folder_and_a_huge_file_are_refused_before_the_client_reads(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    reads = [
        tool_use_block("read_file", {"path": name}, id=f"toolu_{name}")
        for name in ("pipe", "big.log", "src", "app.py")
    ]
    fake_anthropic.reply(*reads, stop_reason="tool_use")
    fake_anthropic.reply("Read what could be read.")
    recorder = Reading()
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=recorder) as agent:
        os.mkfifo(agent.workspace / "pipe")
        (agent.workspace / "big.log").write_bytes(b"x\n" * (MAX_FILE_BYTES // 2 + 1))
        (agent.workspace / "src").mkdir()
        (agent.workspace / "app.py").write_text("on disk\n")
        sid = await agent.new()
        assert (await agent.say(sid, "read them")).stop_reason == "end_turn"

        assert recorder.reads == [str(agent.workspace / "app.py")]
        results = fake_anthropic.message_requests()[1].body["messages"][-1]["content"]
        told = {r["tool_use_id"].removeprefix("toolu_"): r for r in results}
        assert told["pipe"]["is_error"] and "pipe is not a regular file" in told["pipe"]["content"]
        assert (
            told["big.log"]["is_error"] and "over the 5,000,000 bytes" in told["big.log"]["content"]
        )
        assert told["src"]["is_error"] and "src is a folder" in told["src"]["content"]
        assert told["app.py"]["content"] == "     1\tthe editor's text"
