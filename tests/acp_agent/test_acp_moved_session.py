"""A session loaded in another `cwd`: "Allow for this session" given in its old folder does
not cover the new one (the next edit there is asked again), and its calls made in the old
folder are replayed with the paths they had there."""

from __future__ import annotations

from pathlib import Path

from baton_testkit.acp_client import Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

EDIT = "str_replace_based_edit_tool"
RENAME = {"command": "str_replace", "path": "utils.py", "old_str": "old", "new_str": "new"}


async def test_a_permission_for_the_session_does_not_follow_it_to_another_folder(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    recorder = Recorder(permission="allowSession")
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=recorder) as agent:
        other = tmp_path / "other"
        other.mkdir()
        for folder in (agent.workspace, other):
            (folder / "utils.py").write_text("old = 1\n")
        sid = await agent.new()
        for n in range(2):  # allowed for the session: asked once
            fake_anthropic.reply(
                tool_use_block(EDIT, RENAME, id=f"toolu_{n}"), stop_reason="tool_use"
            )
            fake_anthropic.reply("Done.")
            assert (await agent.say(sid, "rename it")).stop_reason == "end_turn"
            (agent.workspace / "utils.py").write_text("old = 1\n")
        assert len(recorder.permission_requests) == 1

        await agent.conn.load_session(cwd=str(other), session_id=sid)
        fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_o"), stop_reason="tool_use")
        fake_anthropic.reply("Done there too.")
        assert (await agent.say(sid, "rename it here")).stop_reason == "end_turn"
        assert len(recorder.permission_requests) == 2  # asked again in the other folder
        asked = recorder.permission_requests[-1]["toolCall"]
        assert asked.locations[0].path == str(other / "utils.py")


async def test_calls_made_in_the_old_folder_are_replayed_with_the_paths_they_had(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        other = tmp_path / "other"
        other.mkdir()
        for folder in (agent.workspace, other):
            (folder / "app.py").write_text("x = 1\n")
        sid = await agent.new()
        read = tool_use_block("read_file", {"path": "app.py"}, id="toolu_here")
        fake_anthropic.reply(read, stop_reason="tool_use")
        fake_anthropic.reply("Read.")
        assert (await agent.say(sid, "read it")).stop_reason == "end_turn"
        await agent.conn.load_session(cwd=str(other), session_id=sid)
        read = tool_use_block("read_file", {"path": "app.py"}, id="toolu_there")
        fake_anthropic.reply(read, stop_reason="tool_use")
        fake_anthropic.reply("Read there.")
        assert (await agent.say(sid, "read it there")).stop_reason == "end_turn"
        live = {
            u["toolCallId"]: u["locations"] for u in agent.recorder.updates(sid, "tool_call_update")
        }
        assert live == {
            "toolu_here": [{"path": str(agent.workspace / "app.py")}],
            "toolu_there": [{"path": str(other / "app.py")}],
        }

    for name, cwd in (("b", other), ("c", agent.workspace)):  # a restart: read from the file
        async with running_agent(tmp_path, fake_anthropic.base_url, name=name) as again:
            await again.conn.load_session(cwd=str(cwd), session_id=sid)
            for kind in ("tool_call", "tool_call_update"):
                replayed = {
                    u["toolCallId"]: u["locations"] for u in again.recorder.updates(sid, kind)
                }
                assert replayed == live
