"""Each ACP session works in its own `cwd`: another session open on the same agent, in
another project, is neither named by its system prompt (nor its CLAUDE.md carried there)
nor restored by its compaction (the files its prompts attached, its instructions)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError, resource_link_block, text_block

from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.acp_client import WAIT, Agent, Recorder, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.request_size import SizeOfRequest, raw_size

WORDS = " ".join(f"word{n}" for n in range(400))


def restored_paths(agent: Agent, sid: str) -> list[str]:
    lines = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [
        m["attachment"]["path"]
        for e in events
        if e["type"] == "boundary"
        for m in e["boundary"]["newMessages"]
        if m.get("kind") == "attachment"
    ]


async def test_a_session_neither_names_nor_restores_another_sessions_project(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "CLAUDE.md").write_text("Rules of project A: ALPHA-RULES\n")
    (other / "secret.py").write_text("KEY = 'ALPHA-FILE'\n")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        app = agent.workspace / "app.py"
        app.write_text("def main():\n    return 42\n")
        a = (await agent.conn.new_session(cwd=str(other))).session_id
        fake_anthropic.reply("Seen.")
        link = resource_link_block("secret.py", (other / "secret.py").as_uri())
        await agent.conn.prompt(session_id=a, prompt=[text_block("Look at this"), link])

        b = await agent.new()  # in agent.workspace, while `a` stays open
        for turn in range(4):
            fake_anthropic.reply(f"Answer {turn}: {WORDS}")
            prompt = [text_block(f"Question {turn}: {WORDS}")]
            if turn == 0:
                prompt.append(resource_link_block("app.py", app.as_uri()))
            await agent.conn.prompt(session_id=b, prompt=prompt)
        system = json.dumps(fake_anthropic.message_requests()[-1].body["system"])
        assert str(agent.workspace) in system
        assert str(other) not in system and "ALPHA-RULES" not in system

        fake_anthropic.reply("<summary>Four questions about words.</summary>")
        assert (await agent.say(b, "/compact-up-to 5")).stop_reason == "end_turn"
        assert restored_paths(agent, b) == [str(app)]  # its own file, nothing of `a`'s
        stored = (agent.data_dir / "sessions" / f"{b}.jsonl").read_text()
        assert "ALPHA-FILE" not in stored and "ALPHA-RULES" not in stored


async def test_a_cwd_holding_a_nul_byte_is_invalid_params_and_makes_no_session(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Such a cwd was taken: the session's tools had no folder (they drop it) while its
    system prompt named it, and it was listed and kept as the session's folder."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        folders = (agent.data_dir / "acp-folders.json").read_bytes()
        bad = f"{agent.workspace}\x00x"
        for method, params in (
            ("session/new", {"cwd": bad, "mcpServers": []}),
            ("session/load", {"sessionId": sid, "cwd": bad, "mcpServers": []}),
            ("session/resume", {"sessionId": sid, "cwd": bad}),
        ):
            with pytest.raises(RequestError) as refused:
                await agent.request(method, params)
            assert refused.value.data["code"] == "invalid_params", method
        listed = (await agent.conn.list_sessions()).sessions
        assert [s.session_id for s in listed] == [sid]
        assert (agent.data_dir / "acp-folders.json").read_bytes() == folders


async def test_a_cwd_inside_git_is_invalid_params_and_makes_no_session(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Such a cwd was taken: the session's tools read inside it, a remote URL with its
    token in `.git/config` included, where Baton never shows the model a file of `.git`."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        git = agent.workspace / ".git"
        git.mkdir()
        (git / "config").write_text("[remote]\n  url = https://TOKEN@example.com/x\n")
        (agent.workspace / "linked").symlink_to(git)
        sid = await agent.new()
        folders = (agent.data_dir / "acp-folders.json").read_bytes()
        for bad in (str(git), str(git / "refs"), str(agent.workspace / "linked")):
            for method, params in (
                ("session/new", {"cwd": bad, "mcpServers": []}),
                ("session/load", {"sessionId": sid, "cwd": bad, "mcpServers": []}),
                ("session/resume", {"sessionId": sid, "cwd": bad}),
            ):
                with pytest.raises(RequestError) as refused:
                    await agent.request(method, params)
                assert refused.value.data["code"] == "invalid_params", method
                assert ".git" in str(refused.value), method
        listed = (await agent.conn.list_sessions()).sessions
        assert [s.session_id for s in listed] == [sid]
        assert (agent.data_dir / "acp-folders.json").read_bytes() == folders
        assert fake_anthropic.message_requests() == []


async def test_a_cwd_that_is_no_folder_is_invalid_params_and_changes_nothing(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A cwd naming no folder (mistyped, a file, a device) was taken: session/new made a
    session whose system prompt named it and whose tools found nothing there, and a load
    moved a session there for good (its folder and system prompt recorded in the
    transcript, its place in the list)."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        fake_anthropic.reply("Here.")
        await agent.say(sid, f"Where are we? {WORDS}")
        fake_anthropic.reply("<summary>The user asked where we are.</summary>")
        await agent.say(sid, "/compact")
        transcript = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_bytes()
        folders = (agent.data_dir / "acp-folders.json").read_bytes()
        (tmp_path / "notes.txt").write_text("a file\n")
        cases = (
            (tmp_path / "no-such-folder", "no such"),
            (tmp_path / "notes.txt", "a file"),
            (Path("/dev/null"), "a device"),
        )
        for bad, why in cases:
            for method, params in (
                ("session/new", {"cwd": str(bad), "mcpServers": []}),
                ("session/load", {"sessionId": sid, "cwd": str(bad), "mcpServers": []}),
                ("session/resume", {"sessionId": sid, "cwd": str(bad)}),
            ):
                with pytest.raises(RequestError) as refused:
                    await agent.request(method, params)
                assert refused.value.data["code"] == "invalid_params", method
                assert str(refused.value).startswith(f"cwd {str(bad)!r} names no folder"), method
                assert why in str(refused.value).lower(), method
        listed = (await agent.conn.list_sessions()).sessions
        assert [(s.session_id, s.cwd) for s in listed] == [(sid, str(agent.workspace))]
        assert (agent.data_dir / "acp-folders.json").read_bytes() == folders
        assert (agent.data_dir / "sessions" / f"{sid}.jsonl").read_bytes() == transcript


@pytest.mark.parametrize("compacted", [False, True])
async def test_the_meter_after_a_load_in_another_folder_counts_the_prompt_made_for_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic, compacted: bool
) -> None:
    """A load in another folder makes the session's default system prompt again for it,
    and its meter went on counting the old one until the next reply's usage (the last
    reply's usage, or after a compaction what it showed besides the view, held it): 47
    tokens short here, a long folder name's. The fake's usage is the size of each
    request, so the meter is held against the very next request."""
    estimator = Estimator()
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        for turn in range(4):
            fake_anthropic.reply(f"Answer {turn}: {WORDS}")
            await agent.say(sid, f"Question {turn}: {WORDS}")
        if compacted:
            fake_anthropic.reply("<summary>Four questions about words.</summary>")
            await agent.say(sid, "/compact-up-to 4")
    other = tmp_path / ("a-folder-with-a-long-name-" * 8)
    other.mkdir()
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as again:
        await again.conn.load_session(session_id=sid, cwd=str(other))
        rec = again.recorder
        await rec.until(lambda: rec.updates(sid, "usage_update"))
        fake_anthropic.reply("There.")
        seen, asked = len(rec.updates(sid)), len(fake_anthropic.message_requests())
        await again.say(sid, "And now?")
        [request] = fake_anthropic.message_requests()[asked:]
        assert str(other) in json.dumps(request.body["system"])
        told = rec.updates(sid)[seen:]
        replied = next(i for i, u in enumerate(told) if u["sessionUpdate"] == "agent_message_chunk")
        stored = [u["used"] for u in told[:replied] if u["sessionUpdate"] == "usage_update"]
        assert stored[-1] == raw_size(estimator, request.body)  # the prompt stored, then sent


def transcript_lines(agent: Agent, sid: str) -> list[dict]:
    lines = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_a_session_loaded_in_another_folder_is_told_that_folder_and_keeps_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The tools moved to the folder of the load while the system prompt, written when the
    session was made, still named (and carried the CLAUDE.md of) the folder it was made
    in: the model was told one folder and worked in another."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, rules in ((first, "FIRST-RULES"), (second, "SECOND-RULES")):
        folder.mkdir()
        (folder / "CLAUDE.md").write_text(f"Rules: {rules}\n")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = (await agent.conn.new_session(cwd=str(first))).session_id
        fake_anthropic.reply("Here.")
        await agent.say(sid, "Where are we?")
        header = (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()[0]
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as agent:
        await agent.conn.load_session(session_id=sid, cwd=str(second))
        fake_anthropic.reply("There.")
        await agent.say(sid, "And now?")
        moved = fake_anthropic.message_requests()[-1].body["system"]
        text = json.dumps(moved)
        assert str(second) in text and "SECOND-RULES" in text
        assert str(first) not in text and "FIRST-RULES" not in text
        events = transcript_lines(agent, sid)
        # recorded by a record of its own, the header left as it was written
        stored = agent.data_dir / "sessions" / f"{sid}.jsonl"
        assert stored.read_text().splitlines()[0] == header
        assert [e["systemPrompt"] for e in events if e["type"] == "meta" and "systemPrompt" in e]
        # loaded again in the same folder: nothing more is written
        count = len(events)
        await agent.conn.load_session(session_id=sid, cwd=str(second))
        assert len(transcript_lines(agent, sid)) == count
    async with running_agent(tmp_path, fake_anthropic.base_url, name="third") as agent:
        await agent.conn.resume_session(session_id=sid, cwd=str(second))
        fake_anthropic.reply("Still there.")
        await agent.say(sid, "Same place?")
        assert fake_anthropic.message_requests()[-1].body["system"] == moved


async def test_an_editors_session_loaded_in_a_folder_is_told_it_unless_its_prompt_is_its_own(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A session made in the editor, its default prompt naming the editor's folder, worked
    in the agent's folder while told the editor's; one whose client gave its own prompt
    keeps it, wherever it is loaded."""
    project, there = tmp_path / "project", tmp_path / "there"
    project.mkdir()
    there.mkdir()
    service = BatonService(Settings(data_dir=str(tmp_path / "data")))
    service.set_editor_name("Visual Studio Code")
    service.set_workspace_folders([project.as_uri()])
    made = service.create().session_id
    own = service.create(system_prompt="Custom rules: OWN-RULES").session_id
    await service.close()
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        for sid in (made, own):
            await agent.conn.load_session(session_id=sid, cwd=str(there))
            fake_anthropic.reply("Here.")
            await agent.say(sid, "Where are we?")
        systems = [json.dumps(r.body["system"]) for r in fake_anthropic.message_requests()]
        assert str(there) in systems[0] and str(project) not in systems[0]
        assert systems[1] == json.dumps("Custom rules: OWN-RULES")
        await agent.conn.load_session(session_id=own, cwd=str(project))
        fake_anthropic.reply("Here again.")
        await agent.say(own, "And now?")
        assert fake_anthropic.message_requests()[-1].body["system"] == "Custom rules: OWN-RULES"


async def test_a_session_open_in_another_agent_loads_in_another_folder_as_it_was(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """It cannot be written: its prompt and its recorded folder stay, and the load works."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    async with running_agent(tmp_path, fake_anthropic.base_url) as owner:
        sid = (await owner.conn.new_session(cwd=str(first))).session_id
        fake_anthropic.reply("Here.")
        await owner.say(sid, "Where are we?")
        stored = (owner.data_dir / "sessions" / f"{sid}.jsonl").read_bytes()
        async with running_agent(tmp_path, fake_anthropic.base_url, name="other") as other:
            await other.conn.load_session(session_id=sid, cwd=str(second))
            assert other.recorder.updates(sid, "user_message_chunk")
        assert (owner.data_dir / "sessions" / f"{sid}.jsonl").read_bytes() == stored
        listed = (await owner.conn.list_sessions()).sessions
        assert [s.cwd for s in listed if s.session_id == sid] == [str(first)]


async def test_the_system_prompt_names_the_editor_the_client_says_it_is(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """`initialize`'s `clientInfo.name` was not read: the prompt said "the user's editor"."""
    editor = {"name": "Zed", "version": "0.200.0"}
    async with running_agent(tmp_path, fake_anthropic.base_url, client_info=editor) as agent:
        sid = await agent.new()
        fake_anthropic.reply("Hello.")
        await agent.say(sid, "Hi")
        system = json.dumps(fake_anthropic.message_requests()[-1].body["system"])
        assert "working with the user in Zed, on the workspace folder" in system


async def test_session_list_finds_a_folder_however_its_cwd_is_spelled(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The filter compared the text: a session made in `/w/app` was not listed for
    `/w/app/`, `/w/./app` or a link to the folder, and another folder's was not left out
    for its spelling either way."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        other = tmp_path / "other"
        other.mkdir()
        elsewhere = (await agent.conn.new_session(cwd=str(other))).session_id
        link = tmp_path / "link-to-workspace"
        link.symlink_to(agent.workspace)
        workspace = str(agent.workspace)
        spellings = [
            workspace,
            workspace + "/",
            f"{agent.workspace.parent}/./{agent.workspace.name}",
            str(link),
        ]
        for spelled in spellings:
            listed = (await agent.conn.list_sessions(cwd=spelled)).sessions
            assert [s.session_id for s in listed] == [sid], spelled
        listed = (await agent.conn.list_sessions(cwd=str(other) + "/")).sessions
        assert [s.session_id for s in listed] == [elsewhere]


async def test_a_load_in_another_folder_leaves_the_sessions_place_in_the_list(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The record of the new folder (and of the prompt made again for it) was taken for
    activity: the session loaded, in which nothing was said, went to the top of the list,
    here and after a restart, above one used after it."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        older = (await agent.conn.new_session(cwd=str(first))).session_id
        fake_anthropic.reply("Here.")
        await agent.say(older, "Where are we?")
        newer = (await agent.conn.new_session(cwd=str(first))).session_id
        fake_anthropic.reply("Here too.")
        await agent.say(newer, "And here?")
        before = (await agent.conn.list_sessions()).sessions
        assert [s.session_id for s in before] == [newer, older]
        await agent.conn.load_session(session_id=older, cwd=str(second))
        assert (await agent.conn.list_sessions()).sessions == [
            s.model_copy(update={"cwd": str(second)}) if s.session_id == older else s
            for s in before
        ]
        assert [e for e in transcript_lines(agent, older) if "folders" in e][-1]["folders"] == [
            str(second)
        ]
    async with running_agent(tmp_path, fake_anthropic.base_url, name="again") as agent:
        listed = (await agent.conn.list_sessions()).sessions
        assert [(s.session_id, s.updated_at) for s in listed] == [
            (s.session_id, s.updated_at) for s in before
        ]


async def test_a_load_in_another_folder_while_the_sessions_turn_runs_is_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A load (or resume) in another folder while the session's turn ran moved the session
    in the middle of the turn: the turn's next requests carried a system prompt naming the
    other folder while its tools went on working in the first, and the move was recorded
    between the turn's messages."""
    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "app.py"}, id="toolu_1"), stop_reason="tool_use"
    )
    fake_anthropic.reply(
        tool_use_block(
            "str_replace_based_edit_tool",
            {"command": "create", "path": "new.py", "file_text": "x = 1\n"},
            id="toolu_2",
        ),
        stop_reason="tool_use",
    )
    client = Recorder(permission=None)  # the edit waits for an answer: the turn runs
    async with running_agent(tmp_path, fake_anthropic.base_url, recorder=client, fs=False) as agent:
        (agent.workspace / "app.py").write_text("print('here')\n")
        other = tmp_path / "other"
        other.mkdir()
        (other / "app.py").write_text("print('elsewhere')\n")
        sid = await agent.new()
        turn = asyncio.ensure_future(agent.say(sid, "add new.py"))
        await client.until(lambda: client.permission_requests, what="a permission request")
        for method in ("session/load", "session/resume"):
            with pytest.raises(RequestError) as refused:
                await agent.request(method, {"sessionId": sid, "cwd": str(other), "mcpServers": []})
            assert refused.value.data["code"] == "invalid_params"
            assert "turn is running" in str(refused.value) and str(agent.workspace) in str(
                refused.value
            )
        # in its own folder, a load replays as before
        await agent.request(
            "session/load", {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []}
        )
        client.permission = "allowOnce"
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        assert not (other / "new.py").exists()
        # once the turn ended, the session moves as before
        await agent.request("session/load", {"sessionId": sid, "cwd": str(other), "mcpServers": []})
