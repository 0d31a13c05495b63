"""A `session/load` replays each call of the server's tool loop as it was told live: one of
a tool the model named that does not exist too, answered "Unknown tool" or not run at all
(its name as title, the answer's first line, the whole text as `rawOutput`), while a call
of another tool, from an imported transcript or answered by a client, keeps its name and
input as title, however its result is worded: the loop marks its answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from baton.core.conversation.messages import MessageInput, ToolResultBlock, ToolUseBlock
from baton.core.conversation.store import SessionStore
from baton.core.usage.estimator import default_estimator
from baton_testkit.acp_client import WAIT, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

SHOWN = ("title", "kind", "status", "content", "rawOutput", "locations")


def shown(update: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(update.get(key) for key in SHOWN)


async def test_a_call_of_an_unknown_tool_is_replayed_as_it_was_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    call = tool_use_block("unknown_tool", {"path": "app.py", "mode": "x"}, id="toolu_u")
    fake_anthropic.reply(call, stop_reason="tool_use")
    fake_anthropic.reply("That tool does not exist.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "use it")).stop_reason == "end_turn"
        [live] = agent.recorder.updates(sid, "tool_call_update")
        assert live["title"] == "unknown_tool" and live["status"] == "failed"
        assert live["rawOutput"].startswith("Unknown tool 'unknown_tool': the tools are ")
        since = len(agent.recorder.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = [
            u
            for u in agent.recorder.updates(sid)[since:]
            if u["sessionUpdate"] == "tool_call_update"
        ]
        assert [shown(u) for u in replayed] == [shown(live)]
        [start] = [
            u for u in agent.recorder.updates(sid)[since:] if u["sessionUpdate"] == "tool_call"
        ]
        assert (start["title"], start["kind"]) == ("unknown_tool", "other")


async def test_a_call_of_an_unknown_tool_not_run_is_replayed_as_it_was_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    read = tool_use_block("read_file", {"path": "a.py"}, id="toolu_1")
    fake_anthropic.reply(read, stop_reason="tool_use")
    made_up = tool_use_block("made_up", {"x": 1}, id="toolu_2")
    fake_anthropic.reply(made_up, stop_reason="tool_use")  # past the limit: not run
    fake_anthropic.reply("Stopped there.")
    settings = {"tools": {"maxSteps": 1}}
    async with running_agent(tmp_path, fake_anthropic.base_url, settings=settings) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "go")).stop_reason == "end_turn"
        live = agent.recorder.updates(sid, "tool_call_update")
        assert live[-1]["title"] == "made_up"
        assert live[-1]["rawOutput"].startswith("Not run: this turn reached its limit")
        since = len(agent.recorder.updates(sid))
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=sid)
        replayed = [
            u
            for u in agent.recorder.updates(sid)[since:]
            if u["sessionUpdate"] == "tool_call_update"
        ]
        assert [shown(u) for u in replayed] == [shown(u) for u in live]


async def test_a_call_of_an_unknown_tool_in_a_round_in_flight_is_replayed_as_told(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    edit = {"command": "str_replace", "path": "utils.py", "old_str": "parse", "new_str": "read"}
    fake_anthropic.reply(
        tool_use_block("made_up", {"path": "utils.py"}, id="toolu_u"),
        tool_use_block("str_replace_based_edit_tool", edit, id="toolu_e"),
        stop_reason="tool_use",
    )
    client = Recorder(permission=None)  # the edit waits: the round's results are not stored
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client) as agent:
        (agent.workspace / "utils.py").write_text("def parse(s):\n    return s\n")
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "rename parse"))
        await client.until(lambda: client.permission_requests, what="a permission request")
        [start] = [u for u in client.updates(sid, "tool_call") if u["toolCallId"] == "toolu_u"]
        seen = len(client.updates(sid))
        params = {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []}
        await agent.request("session/load", params)
        [again] = [
            u
            for u in client.updates(sid)[seen:]
            if u["sessionUpdate"] == "tool_call" and u["toolCallId"] == "toolu_u"
        ]
        told = ("title", "kind", "locations", "rawInput")
        assert [again.get(k) for k in told] == [start.get(k) for k in told]
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"


async def test_a_result_worded_as_the_loops_that_it_did_not_write_keeps_its_name_and_input(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A failed result an editor's client appended for a tool of its own, worded as the
    loop's "Not run: ..." or "Unknown tool ...", was replayed as the loop's answer (its name
    alone as title, the text as rawOutput): the replay went by the result's text."""
    store = SessionStore(tmp_path / "data", default_estimator().count_message)
    session = store.create("client tools", "claude-sonnet-4-5")
    texts = ["Not run: the user declined.", "Unknown tool 'deploy': the tools are none."]
    for n, (name, text) in enumerate(zip(("run_tests", "deploy"), texts, strict=True)):
        use = ToolUseBlock(id=f"toolu_{n}", name=name, input={"suite": "unit"})
        result = ToolResultBlock(tool_use_id=use.id, content=text, is_error=True)
        session.append(
            [
                MessageInput(role="user", content=f"go {n}"),
                MessageInput(role="assistant", content=[use]),
                MessageInput(role="user", content=[result]),
                MessageInput(role="assistant", content="Understood."),
            ]
        )
    store.close()
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session.session_id)
        told = agent.recorder.updates(session.session_id, "tool_call_update")
        titles = [u["title"] for u in told]
        assert titles == ['run_tests {"suite": "unit"}', 'deploy {"suite": "unit"}']
        assert [u.get("rawOutput") for u in told] == [None, None]
        assert [u["content"][0]["content"]["text"] for u in told] == texts


async def test_the_loops_answers_are_marked_and_an_older_transcripts_replay_as_before(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The loop marks its answers (`toolLoop`), its transcript's header says it does; one
    begun before (neither written) still tells the loop's answers by their wording."""
    fake_anthropic.reply(tool_use_block("made_up", {"x": 1}, id="toolu_m"), stop_reason="tool_use")
    fake_anthropic.reply("No such tool.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        assert (await agent.say(sid, "go")).stop_reason == "end_turn"
        [live] = agent.recorder.updates(sid, "tool_call_update")
        path = agent.data_dir / "sessions" / f"{sid}.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert events[0]["marksToolLoop"] is True
    answers = [
        e["message"] for e in events if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    assert [m.get("toolLoop") for m in answers] == [None, True]  # the prompt, the answer
    for event in events:  # as written before the mark
        event.pop("marksToolLoop", None)
        if event["type"] == "message":
            event["message"].pop("toolLoop", None)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as again:
        await again.conn.load_session(cwd=str(again.workspace), session_id=sid)
        [replayed] = again.recorder.updates(sid, "tool_call_update")
        assert shown(replayed) == shown(live)
