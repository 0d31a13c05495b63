"""The workspace tools in an ACP prompt turn: each call told as `tool_call` then
`tool_call_update` (kind, title, locations, content, a diff for edits); an `ask` edit asked
through `session/request_permission` (allowed: written through `fs/write_text_file`;
denied or never answered: nothing written, the model told, the turn goes on); the files
read joining the working set; the transcript keeping every call and result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from baton_testkit.acp_client import WAIT, Agent, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block, tool_use_block

EDIT = "str_replace_based_edit_tool"
RENAME = {
    "command": "str_replace",
    "path": "utils.py",
    "old_str": "parse_date",
    "new_str": "parse_day",
}
UTILS = "def parse_date(s):\n    return s\n"


class Watching(Recorder):
    """A client that notes, when asked, which calls it had been told of, and wakes `until`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.told_when_asked: list[list[str]] = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **_: Any
    ) -> Any:
        told = [u["toolCallId"] for u in self.updates(session_id, "tool_call")]
        self.told_when_asked.append(told)
        # `until` looks again once the request is recorded (a request is no session/update)
        asyncio.get_running_loop().call_soon(self._changed.set)
        return await super().request_permission(session_id, tool_call, options)


def tool_result(fake: FakeAnthropic, request: int) -> dict[str, Any]:
    """The tool_result the model got in its `request`-th call (0-based)."""
    last = fake.message_requests()[request].body["messages"][-1]["content"]
    return next(b for b in last if b["type"] == "tool_result")


def calls(agent: Agent, sid: str, call_id: str) -> list[dict[str, Any]]:
    """Every `tool_call` / `tool_call_update` of one call, in order."""
    kinds = {"tool_call", "tool_call_update"}
    return [
        u
        for u in agent.recorder.updates(sid)
        if u["sessionUpdate"] in kinds and u["toolCallId"] == call_id
    ]


def transcript(agent: Agent, sid: str) -> list[dict[str, Any]]:
    path = agent.data_dir / "sessions" / f"{sid}.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"] for e in events if e["type"] == "message"]


def boundary_messages(agent: Agent, sid: str) -> list[dict[str, Any]]:
    """The messages the session's compactions added (summaries, restored files)."""
    path = agent.data_dir / "sessions" / f"{sid}.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [m for e in events if e["type"] == "boundary" for m in e["boundary"]["newMessages"]]


def blocks_of(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == kind
    ]


async def test_a_read_is_a_tool_call_answered_through_the_clients_buffer(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "app.py"}, id="toolu_r"), stop_reason="tool_use"
    )
    fake_anthropic.reply("It returns 43.")
    async with running_agent(tmp_path, fake_anthropic.base_url, compaction=False) as agent:
        app = agent.workspace / "app.py"
        app.write_text("def main():\n    return 42\n")
        agent.recorder.files[str(app)] = "def main():\n    return 43\n"  # unsaved in the editor
        sid = await agent.new()
        answer = await agent.say(sid, "What does main return?")
        assert answer.stop_reason == "end_turn"

        start, *moves = calls(agent, sid, "toolu_r")
        assert start["sessionUpdate"] == "tool_call"
        assert (start["kind"], start["title"], start["status"]) == (
            "read",
            "Read app.py",
            "in_progress",
        )
        assert start["locations"] == [{"path": str(app)}]  # absolute, in the session's cwd
        assert start["rawInput"] == {"path": "app.py"}
        (done,) = moves
        assert done["sessionUpdate"] == "tool_call_update" and done["status"] == "completed"
        assert done["content"][0]["content"]["text"] == "2 lines"
        told = tool_result(fake_anthropic, 1)
        assert "return 43" in str(told["content"]) and not told.get("is_error")
        assert "read_file" in {
            t["name"] for t in fake_anthropic.message_requests()[0].body["tools"]
        }
        text = "".join(
            c["content"]["text"] for c in agent.recorder.updates(sid, "agent_message_chunk")
        )
        assert text == "It returns 43."

        # the file read joins the working set a compaction restores
        fake_anthropic.reply("<summary>The user asked what main returns: 43.</summary>")
        assert (await agent.say(sid, "/compact-up-to 3")).stop_reason == "end_turn"
        restored = [m for m in boundary_messages(agent, sid) if m.get("kind") == "attachment"]
        assert any(str(m["attachment"]["path"]).endswith("app.py") for m in restored)


async def test_an_allowed_edit_is_asked_and_written_through_the_client(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    fake_anthropic.reply("Renamed.")
    recorder = Watching()
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=recorder) as agent:
        utils = agent.workspace / "utils.py"
        utils.write_text(UTILS)
        sid = await agent.new()
        assert (await agent.say(sid, "rename it")).stop_reason == "end_turn"

        rec = agent.recorder
        (asked,) = rec.permission_requests
        call = asked["toolCall"]
        assert (call.tool_call_id, call.kind, call.title) == (
            "toolu_e",
            "edit",
            "Edit utils.py (+1 -1)",
        )
        assert [o.option_id for o in asked["options"]] == ["allowOnce", "allowSession", "deny"]
        assert call.locations[0].path == str(utils)
        assert recorder.told_when_asked == [["toolu_e"]]  # the tool_call came first
        assert rec.written == {str(utils): "def parse_day(s):\n    return s\n"}
        assert utils.read_text() == UTILS  # the editor writes, not Baton

        start, done = calls(agent, sid, "toolu_e")
        assert (start["sessionUpdate"], start["kind"]) == ("tool_call", "edit")
        assert start["title"] == "Edit utils.py (+1 -1)"
        assert done["status"] == "completed"
        diff = next(c for c in done["content"] if c["type"] == "diff")
        assert diff["path"] == str(utils)
        assert "parse_day" in diff["newText"] and "parse_date" in diff["oldText"]
        assert (
            tool_result(fake_anthropic, 1)["content"] == "Applied: Edit utils.py (+1 -1) at line 1."
        )


async def test_a_denied_edit_writes_nothing_and_tells_the_model(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    fake_anthropic.reply("Left as it is.")
    recorder = Recorder(permission="deny")
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=recorder) as agent:
        utils = agent.workspace / "utils.py"
        utils.write_text(UTILS)
        sid = await agent.new()
        assert (await agent.say(sid, "rename it")).stop_reason == "end_turn"

        assert len(recorder.permission_requests) == 1
        assert recorder.written == {} and utils.read_text() == UTILS
        told = tool_result(fake_anthropic, 1)
        assert told["is_error"] is True and told["content"].startswith("Denied")
        _, done = calls(agent, sid, "toolu_e")
        assert done["status"] == "failed"


async def test_a_client_that_never_answers_is_denied_after_a_bounded_wait(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BATON_ACP_PERMISSION_WAIT", "0.5")
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    fake_anthropic.reply("Nobody answered; nothing changed.")
    recorder = Recorder(permission=None)
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=recorder) as agent:
        utils = agent.workspace / "utils.py"
        utils.write_text(UTILS)
        sid = await agent.new()
        assert (await agent.say(sid, "rename it")).stop_reason == "end_turn"

        assert len(recorder.permission_requests) == 1
        assert recorder.written == {} and utils.read_text() == UTILS
        told = tool_result(fake_anthropic, 1)
        assert told["is_error"] is True and told["content"].startswith("Denied")
        said = "".join(c["content"]["text"] for c in recorder.updates(sid, "agent_message_chunk"))
        assert "No answer to the permission request" in said
        assert said.endswith("Nobody answered; nothing changed.")  # the turn went on


async def test_the_transcript_keeps_every_call_and_result_and_a_load_replays_them(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "utils.py"}, id="toolu_r"), stop_reason="tool_use"
    )
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    fake_anthropic.reply("Renamed.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        (agent.workspace / "utils.py").write_text(UTILS)
        sid = await agent.new()
        assert (await agent.say(sid, "rename it")).stop_reason == "end_turn"
        messages = transcript(agent, sid)
        assert [m["role"] for m in messages] == [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        assert [b["id"] for b in blocks_of(messages, "tool_use")] == ["toolu_r", "toolu_e"]
        results = blocks_of(messages, "tool_result")
        assert [r["tool_use_id"] for r in results] == ["toolu_r", "toolu_e"]
        assert results[1]["content"] == "Applied: Edit utils.py (+1 -1) at line 1."
        live = agent.recorder.updates(sid, "tool_call_update")
        assert [u["title"] for u in live] == ["Read utils.py", "Edit utils.py (+1 -1)"]

    async with running_agent(tmp_path, fake_anthropic.base_url, name="b") as again:
        await again.conn.load_session(cwd=str(again.workspace), session_id=sid)
        told = [u["toolCallId"] for u in again.recorder.updates(sid, "tool_call")]
        assert told == ["toolu_r", "toolu_e"]
        updates = again.recorder.updates(sid, "tool_call_update")
        assert {u["toolCallId"] for u in updates} == {"toolu_r", "toolu_e"}
        # replayed as they were told live: titles, kinds, absolute locations, results
        replayed = [
            (u["title"], u["kind"], u["locations"], u["status"])
            for u in again.recorder.updates(sid, "tool_call_update")
        ]
        assert replayed == [(u["title"], u["kind"], u["locations"], u["status"]) for u in live]


async def test_a_sessions_tools_reach_only_its_own_cwd(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "secret.py").write_text("KEY = 'not for the first session'\n")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        await agent.conn.new_session(cwd=str(other))  # open too: a workspace folder of the service
        sid = await agent.new()
        fake_anthropic.reply(
            tool_use_block("read_file", {"path": str(other / "secret.py")}, id="toolu_x"),
            stop_reason="tool_use",
        )
        fake_anthropic.reply("I cannot read it.")
        assert (await agent.say(sid, "read the other project's file")).stop_reason == "end_turn"
        told = tool_result(fake_anthropic, 1)
        assert told["is_error"] is True and "not for the first session" not in str(told["content"])
        _, done = calls(agent, sid, "toolu_x")
        assert done["status"] == "failed"


async def test_cancel_while_asked_ends_the_turn_and_answers_the_call(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(tool_use_block(EDIT, RENAME, id="toolu_e"), stop_reason="tool_use")
    recorder = Watching(permission=None)
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=recorder) as agent:
        utils = agent.workspace / "utils.py"
        utils.write_text(UTILS)
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "rename it"))
        await recorder.until(lambda: recorder.permission_requests, what="a permission request")
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        assert recorder.written == {} and utils.read_text() == UTILS
        (result,) = blocks_of(transcript(agent, sid), "tool_result")
        assert result["tool_use_id"] == "toolu_e" and result["content"].startswith("Not run")
        assert len(fake_anthropic.message_requests()) == 1  # the model was not asked again


async def test_each_rounds_thinking_is_told_before_its_calls(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        thinking_block("I should read app.py."),
        tool_use_block("read_file", {"path": "app.py"}, id="toolu_r"),
        stop_reason="tool_use",
    )
    fake_anthropic.reply(thinking_block("It says 42."), "42.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        (agent.workspace / "app.py").write_text("def main():\n    return 42\n")
        sid = await agent.new()
        assert (await agent.say(sid, "What does main return?")).stop_reason == "end_turn"
        told = [
            u.get("toolCallId") or u["content"]["text"]
            for u in agent.recorder.updates(sid)
            if u["sessionUpdate"] in {"agent_thought_chunk", "tool_call", "tool_call_update"}
        ]
        assert told == ["I should read app.py.", "toolu_r", "toolu_r", "It says 42."]
