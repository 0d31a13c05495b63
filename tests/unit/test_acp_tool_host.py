"""`AcpToolHost` against the SDK's client side (in memory): permission allowed, allowed for
the session, denied, cancelled, never answered (a bounded wait, then denied and the turn
told); the client's text read; edits written through the client or the disk, and refused
when the file changed meanwhile. And the tool-call notifications made from a record."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp._transport import memory_transport_pair
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection

from baton.acp.tool_calls import diff_texts, tool_call_notification
from baton.acp.tool_host import AcpToolHost, FileEdit, PermissionRequest
from baton_testkit.acp_client import Recorder

DIFF = "--- a/utils.py\n+++ b/utils.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"


class NoAgent:
    """The agent side only sends requests here."""


@dataclass
class Pair:
    host: AcpToolHost
    recorder: Recorder
    told: list[str]


@pytest.fixture
async def pair() -> AsyncIterator[Any]:
    made: list[tuple[AgentSideConnection, ClientSideConnection]] = []

    def make(permission: str | None = "allowOnce", *, fs: bool = True, wait: float = 5.0) -> Pair:
        left, right = memory_transport_pair()
        recorder = Recorder(permission=permission)
        agent_side = AgentSideConnection(NoAgent(), left)  # type: ignore[arg-type]
        client_side = ClientSideConnection(recorder, right)
        made.append((agent_side, client_side))
        told: list[str] = []
        host = AcpToolHost(agent_side, "s1", can_read=fs, can_write=fs, tell=told.append, wait=wait)
        return Pair(host, recorder, told)

    yield make
    for agent_side, client_side in made:
        await client_side.close()
        await agent_side.close()


def edit_request() -> PermissionRequest:
    return PermissionRequest(
        session_id="s1",
        tool_use_id="toolu_1",
        tool="edit_file",
        input={"path": "/w/utils.py", "oldText": "return 1", "newText": "return 2"},
        title="Edit utils.py (+1 -1)",
        kind="edit",
        path="/w/utils.py",
        diff=DIFF,
    )


@pytest.mark.parametrize("answer", ["allowOnce", "allowSession"])
async def test_an_allowed_request_returns_the_option_picked(pair: Any, answer: str) -> None:
    p = pair(answer)
    assert await p.host.ask_permission(edit_request()) == answer
    [asked] = p.recorder.permission_requests
    assert [(o.option_id, o.kind) for o in asked["options"]] == [
        ("allowOnce", "allow_once"),
        ("allowSession", "allow_always"),
        ("deny", "reject_once"),
    ]
    call = asked["toolCall"]
    assert (call.tool_call_id, call.title, call.kind) == (
        "toolu_1",
        "Edit utils.py (+1 -1)",
        "edit",
    )
    assert call.locations[0].path == "/w/utils.py"
    diff = call.content[0]
    assert (diff.old_text, diff.new_text) == ("def f():\n    return 1", "def f():\n    return 2")


@pytest.mark.parametrize("answer", ["deny", "cancelled", "somethingElse"])
async def test_a_denied_cancelled_or_unknown_answer_is_deny(pair: Any, answer: str) -> None:
    assert await pair(answer).host.ask_permission(edit_request()) == "deny"


async def test_a_client_that_never_answers_is_denied_after_a_bounded_wait(pair: Any) -> None:
    p = pair(None, wait=0.3)
    started = asyncio.get_running_loop().time()
    assert await p.host.ask_permission(edit_request()) == "deny"
    assert asyncio.get_running_loop().time() - started < 5
    assert p.told and "Edit utils.py (+1 -1)" in p.told[0] and "denied" in p.told[0]


async def test_read_text_is_the_clients_text_only_when_it_offers_fs(
    pair: Any, tmp_path: Path
) -> None:
    path = tmp_path / "a.py"
    path.write_text("on disk\n")
    p = pair()
    p.recorder.files[str(path)] = "unsaved buffer\n"
    assert await p.host.read_text(path) == "unsaved buffer\n"
    assert await pair(fs=False).host.read_text(path) is None


async def test_an_edit_goes_through_the_client_and_is_refused_when_the_file_moved_on(
    pair: Any, tmp_path: Path
) -> None:
    path = tmp_path / "utils.py"
    path.write_text("x = 1\n")
    p = pair()
    done = await p.host.apply_edit(FileEdit(path, "x = 1\n", "x = 2\n", "Edit utils.py"))
    assert done.applied and p.recorder.written == {str(path): "x = 2\n"}
    assert path.read_text() == "x = 1\n"  # the editor writes; the host did not
    stale = await p.host.apply_edit(FileEdit(path, "x = 1\n", "x = 3\n", "Edit utils.py"))
    assert (stale.applied, stale.reason) == (False, "the file changed meanwhile")


async def test_without_fs_an_edit_is_written_on_the_disk(pair: Any, tmp_path: Path) -> None:
    path = tmp_path / "new.py"
    p = pair(fs=False)
    made = await p.host.apply_edit(FileEdit(path, None, "print('hi')\n", "Create new.py"))
    assert made.applied and path.read_text() == "print('hi')\n"
    moved = await p.host.apply_edit(FileEdit(path, None, "other\n", "Create new.py"))
    assert not moved.applied and path.read_text() == "print('hi')\n"


async def test_without_fs_a_new_file_gets_the_mode_any_new_file_gets(
    pair: Any, tmp_path: Path
) -> None:
    """A file the model created was made 0600, the mode of Baton's own data files: a
    page, a script or a config file of the project that the web server, a container's
    user or a teammate on the machine could not read, unlike every file made beside it."""
    import os

    before = os.umask(0o022)
    try:
        path = tmp_path / "sub" / "index.html"
        made = await pair(fs=False).host.apply_edit(FileEdit(path, None, "<p>hi</p>\n", "Create"))
        beside = tmp_path / "sub" / "beside.html"
        beside.write_text("")
    finally:
        os.umask(before)
    assert made.applied and path.read_text() == "<p>hi</p>\n"
    assert path.stat().st_mode & 0o777 == beside.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["beside.html", "index.html"]


async def test_without_fs_a_file_the_user_may_not_write_is_not_replaced(
    pair: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename over it would replace a read-only file (root may write anything, so the
    refusal is simulated by what os.access answers)."""
    import os

    path = tmp_path / "locked.py"
    path.write_text("x = 1\n")
    path.chmod(0o444)
    monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
    refused = await pair(fs=False).host.apply_edit(FileEdit(path, "x = 1\n", "x = 2\n", "Edit"))
    assert not refused.applied and "Permission denied" in (refused.reason or "")
    assert path.read_text() == "x = 1\n" and path.stat().st_mode & 0o777 == 0o444


async def test_without_fs_a_crlf_file_is_compared_with_its_line_ends(
    pair: Any, tmp_path: Path
) -> None:
    path = tmp_path / "win.py"
    path.write_bytes(b"x = 1\r\n")
    done = await pair(fs=False).host.apply_edit(FileEdit(path, "x = 1\r\n", "x = 2\r\n", "Edit"))
    assert done.applied and path.read_bytes() == b"x = 2\r\n"


async def test_without_fs_an_edit_of_a_link_writes_the_file_it_links_to(
    pair: Any, tmp_path: Path
) -> None:
    """An edit goes to the name the editor has the file open by, a link among them; the
    new file renamed over the link replaced it with a copy."""
    real, link = tmp_path / "real.py", tmp_path / "alias.py"
    real.write_text("x = 1\n")
    link.symlink_to(real)
    done = await pair(fs=False).host.apply_edit(FileEdit(link, "x = 1\n", "x = 2\n", "Edit"))
    assert done.applied and link.is_symlink() and real.read_text() == "x = 2\n"


@dataclass(frozen=True)
class Info:
    tool_use_id: str
    tool: str
    title: str
    status: str
    summary: str | None = None
    path: str | None = None
    diff: str | None = None


def test_a_read_starts_as_a_tool_call_with_its_location() -> None:
    info = Info("toolu_r", "read_file", "Read app.py:1-80", "running", path="/w/app.py")
    start = tool_call_notification(info, first=True, tool_input={"path": "app.py"})
    body = start.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert body == {
        "sessionUpdate": "tool_call",
        "toolCallId": "toolu_r",
        "title": "Read app.py:1-80",
        "kind": "read",
        "status": "in_progress",
        "locations": [{"path": "/w/app.py"}],
        "rawInput": {"path": "app.py"},
    }


def test_an_edit_update_carries_its_summary_and_diff() -> None:
    info = Info("toolu_e", "edit_file", "Edit utils.py (+1 -1)", "done", "applied", "/w/u.py", DIFF)
    update = tool_call_notification(info, first=False)
    body = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert body["sessionUpdate"] == "tool_call_update"
    assert (body["kind"], body["status"]) == ("edit", "completed")
    assert body["content"][0] == {"type": "content", "content": {"type": "text", "text": "applied"}}
    assert body["content"][1]["type"] == "diff"
    assert body["content"][1]["newText"] == "def f():\n    return 2"
    whole = tool_call_notification(info, first=False, before="a\n", after="b\n")
    assert whole.content is not None and whole.content[1].old_text == "a\n"  # type: ignore[union-attr]


def test_denied_and_failed_calls_are_failed_and_search_tools_are_searches() -> None:
    denied = tool_call_notification(Info("t", "search_text", "Search `x`", "denied"), first=False)
    assert (denied.kind, denied.status) == ("search", "failed")
    assert denied.content is not None and denied.content[0].content.text == "denied"  # type: ignore[union-attr]
    view = tool_call_notification(
        Info("t", "str_replace_based_edit_tool", "View a.py", "pending"),
        first=True,
        tool_input={"command": "view", "path": "a.py"},
    )
    assert view.kind == "read"
    assert diff_texts("@@ -1 +1 @@\n-a\n+b\n c") == ("a\nc", "b\nc")


def test_a_call_report_tells_the_call_then_its_result_with_absolute_paths() -> None:
    from baton.acp.tool_calls import CallReport
    from baton.core.conversation.messages import ToolUseBlock
    from baton.core.tools.registry import ToolResult

    sent: list[Any] = []
    before: list[str] = []
    report = CallReport(sent.append, before=before.append)
    use = ToolUseBlock(
        id="toolu_e", name="edit_file", input={"path": "u.py", "oldText": "a", "newText": "b"}
    )
    report.started(use, [Path("/w")])
    denied = ToolResult("Denied: no.", is_error=True, summary="Denied: no.", status="denied")
    report.finished("toolu_e", denied, [Path("/w")])
    report.finished("toolu_e", denied, [Path("/w")])  # told once
    assert before == ["toolu_e"]
    start, done = (u.model_dump(by_alias=True, exclude_none=True) for u in sent)
    assert (start["sessionUpdate"], start["kind"], start["status"]) == (
        "tool_call",
        "edit",
        "in_progress",
    )
    assert start["locations"] == [{"path": "/w/u.py"}]
    assert (done["sessionUpdate"], done["status"], done["rawOutput"]) == (
        "tool_call_update",
        "failed",
        "Denied: no.",
    )
    assert done["content"][0]["content"]["text"] == "Denied: no."
    assert done["content"][1]["path"] == "/w/u.py"


async def test_without_fs_a_new_file_is_never_written_through_a_link_put_in_its_place(
    pair: Any, tmp_path: Path
) -> None:
    """A link to a file that does not exist, put where the new file goes after the edit
    was planned (the plan refuses one already there), was followed: the file was made
    wherever it pointed, outside the workspace. It is refused, and nothing is made."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    link = workspace / "new.py"
    link.symlink_to(outside / "planted.py")

    made = await pair(fs=False).host.apply_edit(FileEdit(link, None, "x = 1\n", "Create new.py"))

    assert not made.applied and "does not exist" in (made.reason or "")
    assert list(outside.iterdir()) == [] and link.is_symlink()


@pytest.mark.parametrize(
    ("given", "location"),
    [
        ("file:///w/src/u.py", "/w/src/u.py"),
        ("file:///w/src/u%20v.py", "/w/src/u v.py"),
        ("./src/u.py", "/w/src/u.py"),
    ],
)
def test_a_calls_location_is_the_plain_absolute_path_of_the_file(given: str, location: str) -> None:
    """A path the model gave as a file: URI was told as that URI, which ACP's location (an
    absolute path) is not."""
    from baton.acp.tool_calls import CallReport
    from baton.core.conversation.messages import ToolUseBlock

    sent: list[Any] = []
    report = CallReport(sent.append)
    use = ToolUseBlock(id="toolu_r", name="read_file", input={"path": given})
    report.started(use, [Path("/w")])
    [start] = (u.model_dump(by_alias=True, exclude_none=True) for u in sent)
    assert start["locations"] == [{"path": location}]


async def test_without_fs_an_edit_not_applied_is_told_as_with_no_editor(
    pair: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same edit not applied was told in other words over ACP: 'file changed meanwhile'
    for 'the file changed meanwhile', and a file that could not be read was said to have
    changed (root reads anything, so the refusal is simulated)."""
    from baton.acp import tool_host as acp_host
    from baton.core.tools import host as core_host
    from baton.core.tools.host import DiskHost

    path = tmp_path / "f.py"
    path.write_text("x = 2\n")
    stale = FileEdit(path, "x = 1\n", "x = 3\n", "Edit f.py")
    over_acp = await pair(fs=False).host.apply_edit(stale)
    assert over_acp == await DiskHost().apply_edit(stale)
    assert over_acp.reason == "the file changed meanwhile"

    def refused(_: Path) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(core_host, "current_text", refused)
    monkeypatch.setattr(acp_host, "current_text", refused)
    edit = FileEdit(path, "x = 2\n", "x = 3\n", "Edit f.py")
    over_acp = await pair(fs=False).host.apply_edit(edit)
    assert over_acp == await DiskHost().apply_edit(edit)
    assert over_acp.reason == "the file cannot be read (Permission denied)"


async def test_without_fs_a_write_refused_is_told_as_with_no_editor(
    pair: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was told 'Permission denied: /…/locked.py' over ACP, where the disk host says
    'the file cannot be written (Permission denied)' (root may write anything: simulated)."""
    import os

    path = tmp_path / "locked.py"
    path.write_text("x = 1\n")
    monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
    refused = await pair(fs=False).host.apply_edit(FileEdit(path, "x = 1\n", "x = 2\n", "Edit"))
    assert refused.reason == "the file cannot be written (Permission denied)"
