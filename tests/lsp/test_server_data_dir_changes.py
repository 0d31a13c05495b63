"""A data dir that changes under a running server (issue 26, item 9): its sessions folder
made a link, or moved away, while the server runs is told once, when a list, a create or
a get next touches it, in the start's words (a warning the client shows and the log), and
told again once it is back; nothing is written through the link and nothing is lost."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsp_harness import Harness, conversation
from lsprotocol import types

from baton import protocol
from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

Starter = Callable[..., Awaitable[Harness]]  # the `start_server` fixture (tests/lsp/conftest)


def shown(lsp: Harness, after: int = 0) -> list[Any]:
    """The messages the client was asked to show (window/showMessage) from `after`."""
    return [p for m, p in lsp.recorder.received[after:] if m == types.WINDOW_SHOW_MESSAGE]


def logged(lsp: Harness, text: str) -> list[str]:
    """The warnings and notes of the client's log (window/logMessage) naming `text`."""
    return [
        p.message
        for p in lsp.recorder.of(types.WINDOW_LOG_MESSAGE)
        if p.type in (types.MessageType.Warning, types.MessageType.Info) and text in p.message
    ]


async def listed(lsp: Harness) -> list[str]:
    return [s["sessionId"] for s in (await lsp.request(protocol.SESSION_LIST))["sessions"]]


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


async def test_a_sessions_folder_made_a_link_while_the_server_runs_is_told_once_each_way(
    start_server: Starter, tmp_path: Path
) -> None:
    lsp = await start_server()
    sid = (await lsp.create(title="kept"))["sessionId"]
    await lsp.append(sid, *conversation(2))
    assert await listed(lsp) == [sid]
    assert shown(lsp) == []
    folder = lsp.data_dir / "sessions"
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)  # moved out, a link left in its place
    folder.symlink_to(elsewhere)
    before = files(elsewhere)

    mark = lsp.recorder.mark()
    assert await listed(lsp) == []  # nothing read through the link
    told = shown(lsp, mark)
    assert len(told) == 1 and told[0].type == types.MessageType.Warning, told
    assert str(folder) in told[0].message and "symbolic link" in told[0].message
    assert "cannot be kept" in told[0].message  # what it can no longer do
    assert len(logged(lsp, str(folder))) == 1

    # the next requests that touch the folder say nothing more
    error = await lsp.error(protocol.SESSION_CREATE, {"title": "new chat"})
    assert error.baton_code == "storage_error" and str(folder) in error.message
    assert await listed(lsp) == []
    await lsp.get(sid)  # held open: still shown
    # nor does a change of settings, which says what the data dir does not allow
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"contextWindow": 30_000}})
    )
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED,
        lambda p: p["sessionId"] == sid and p["usage"]["contextWindow"] == 30_000,
        after=mark,
    )
    assert await listed(lsp) == []  # answered after the change of settings
    assert len(shown(lsp, mark)) == 1 and len(logged(lsp, str(folder))) == 1
    assert files(elsewhere) == before  # nothing written through the link

    folder.unlink()  # put back
    elsewhere.rename(folder)
    mark = lsp.recorder.mark()
    assert await listed(lsp) == [sid]
    back = shown(lsp, mark)
    assert len(back) == 1 and back[0].type == types.MessageType.Info, back
    assert str(folder) in back[0].message and "again" in back[0].message
    assert await listed(lsp) == [sid]
    await lsp.append(sid, *conversation(1))
    assert len(shown(lsp, mark)) == 1
    assert files(folder)[f"{sid}.jsonl"].startswith(before[f"{sid}.jsonl"])  # nothing lost

    # made a link again: told again, the same words as the first time
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    mark = lsp.recorder.mark()
    await lsp.error(protocol.SESSION_CREATE, {"title": "new chat"})
    again = shown(lsp, mark)
    assert [m.message for m in again] == [told[0].message]


async def test_a_data_dir_moved_away_while_the_server_runs_is_told_once_each_way(
    start_server: Starter, tmp_path: Path
) -> None:
    lsp = await start_server()
    sid = (await lsp.create(title="kept"))["sessionId"]
    await lsp.append(sid, *conversation(1))
    assert await listed(lsp) == [sid]
    moved = tmp_path / "moved"
    lsp.data_dir.rename(moved)
    folder = lsp.data_dir / "sessions"

    mark = lsp.recorder.mark()
    assert await listed(lsp) == []
    told = shown(lsp, mark)
    assert len(told) == 1 and told[0].type == types.MessageType.Warning, told
    assert str(folder) in told[0].message and "gone" in told[0].message
    assert await listed(lsp) == []
    assert len(shown(lsp, mark)) == 1 and len(logged(lsp, str(folder))) == 1

    moved.rename(lsp.data_dir)  # moved back
    mark = lsp.recorder.mark()
    assert await listed(lsp) == [sid]
    back = shown(lsp, mark)
    assert len(back) == 1 and back[0].type == types.MessageType.Info, back
    assert str(folder) in back[0].message
    assert (await lsp.get(sid))["session"]["sessionId"] == sid
    assert len(shown(lsp, mark)) == 1


async def test_a_new_chat_after_the_data_dir_went_away_makes_it_again_without_a_second_word(
    start_server: Starter, tmp_path: Path
) -> None:
    lsp = await start_server()
    await lsp.create(title="first")
    lsp.data_dir.rename(tmp_path / "moved")
    mark = lsp.recorder.mark()
    sid = (await lsp.create(title="second"))["sessionId"]  # the folder made again
    told = shown(lsp, mark)
    assert len(told) == 1 and "gone" in told[0].message, told  # why the first is not listed
    assert await listed(lsp) == [sid]
    assert len(shown(lsp, mark)) == 1  # the folder this server made is not news


async def test_an_agent_says_on_stderr_once_that_its_sessions_folder_was_made_a_link(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("Kept.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        await agent.say(sid, "A session started in an agent panel")
        folder = tmp_path / "data" / "sessions"
        elsewhere = tmp_path / "elsewhere"
        folder.rename(elsewhere)
        folder.symlink_to(elsewhere)

        def said(text: str) -> list[str]:
            stderr = (tmp_path / "agent.stderr").read_text(encoding="utf-8")
            return [line for line in stderr.splitlines() if str(folder) in line and text in line]

        for _ in range(2):
            listed = await agent.conn.list_sessions(cwd=str(agent.workspace))
            assert listed.sessions == []
        assert len(said("symbolic link")) == 1
        folder.unlink()
        elsewhere.rename(folder)
        for _ in range(2):
            listed = await agent.conn.list_sessions(cwd=str(agent.workspace))
            assert [s.session_id for s in listed.sessions] == [sid]
        assert len(said("again")) == 1
