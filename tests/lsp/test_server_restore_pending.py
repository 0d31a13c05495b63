"""The working set a compaction restores while an edit call waits for the user's word."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from lsp_harness import WAIT_SECONDS, Harness, conversation
from test_server_tools import EDIT, RENAME, WITH_KEY, Editor, asking

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

BEFORE = "def parse_date(s):\n    return s\n"
AFTER = "def parse_day(s):\n    return s\n"


async def asked_to_edit(
    lsp: Harness, fake: FakeAnthropic, gate: threading.Event | None = None, said: str = ""
) -> tuple[str, str, Editor, asyncio.Future, Any]:
    """A session whose send read utils.py, then asked to edit it (saying `said` with the
    call), and waits for the user: its id, the read's result's id, the editor, the send,
    and with a `gate` the fake's answer to a compaction's request (scripted before the
    model's last reply), held until the gate is set."""
    (lsp.workspace / "utils.py").write_text(BEFORE)
    editor = Editor(lsp, outcome="never")
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(3))
    fake.reply(tool_use_block("read_file", {"path": "utils.py"}), stop_reason="tool_use")
    edit = tool_use_block(EDIT, RENAME, id="toolu_e")
    fake.reply(*([said] if said else []), edit, stop_reason="tool_use")
    held = fake.reply("<summary>held</summary>", hold_after=3, gate=gate) if gate else None
    fake.reply("Done as you said.")
    send = {"sessionId": sid, "content": "rename it"}
    pending = asyncio.ensure_future(lsp.request(protocol.SESSION_SEND, send))
    await asyncio.wait_for(editor.waiting.wait(), WAIT_SECONDS)
    read_result = (await lsp.get(sid))["messages"][-2]
    assert read_result["content"][0]["content"].endswith("return s")  # the read's
    return sid, read_result["id"], editor, pending, held


def copies(messages: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """The restored copies the messages hold, with the index of the message holding each."""
    return [
        (n, block["text"])
        for n, message in enumerate(messages)
        for block in message["content"]
        if block["type"] == "text" and block["text"].startswith("Restored file: ")
    ]


def fenced(copy: str) -> str:
    return copy.split("```\n", 1)[1].rsplit("\n```", 1)[0]


def the_call(messages: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """The edit call's message index, and its result (the only calls the messages hold)."""
    calls = [(n, b) for n, m in enumerate(messages) for b in m["content"] if b["type"] != "text"]
    assert [b.get("id") or b.get("tool_use_id") for _, b in calls] == ["toolu_e", "toolu_e"]
    return calls[0][0], calls[1][1]


@pytest.mark.parametrize("outcome", ["deny", "allowOnce"])
async def test_a_compaction_while_an_edit_is_asked_about_restores_the_file_it_summarized(
    start_server: Any, fake_anthropic: FakeAnthropic, outcome: str
) -> None:
    """The model read utils.py, then asked to edit it; a compaction committed while the user
    was asked: the call, with no answer yet, counted as showing the file, so the read went
    into the summary and nothing came back. Denied, the model was left with no copy of the
    file at all."""
    options = {**WITH_KEY, "summarizer": "extractive"}
    lsp: Harness = await start_server(options=options, capabilities=asking())
    utils = lsp.workspace / "utils.py"
    sid, read_id, editor, pending, _ = await asked_to_edit(lsp, fake_anthropic)
    try:
        params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": read_id}
        compacted = await lsp.request(protocol.COMPACT, params)
        assert [f["uri"] for f in compacted["restoredFiles"]] == [utils.as_uri()]
        editor.outcome = outcome
    finally:
        editor.hold.set()
    await pending

    messages = fake_anthropic.message_requests()[-1].body["messages"]
    ((at, copy),) = copies(messages)  # one copy: the file when the model asked to edit it
    assert copy.startswith(f"Restored file: {utils}\n") and fenced(copy) == BEFORE
    call_at, result = the_call(messages)
    assert at < call_at  # before the call, as the read it stands for was
    if outcome == "deny":
        assert result["content"].startswith("Denied: ") and utils.read_text() == BEFORE
    else:  # the copy with the call applied is the file as it is now: nothing disagrees
        assert result["content"].startswith("Applied: ") and utils.read_text() == AFTER
        assert fenced(copy).replace(RENAME["old_str"], RENAME["new_str"]) == AFTER


@pytest.mark.parametrize("outcome", ["deny", "allowOnce"])
async def test_an_edit_answered_while_the_compaction_ran_is_counted_by_its_answer(
    start_server: Any, fake_anthropic: FakeAnthropic, outcome: str
) -> None:
    """The user answers while the summary is written: the restore reads the file then, so
    an edit allowed meanwhile must count as showing it (its answer is among the messages
    appended since), or the copy, already edited, would come before the edit itself."""
    lsp: Harness = await start_server(options=WITH_KEY, capabilities=asking())
    utils = lsp.workspace / "utils.py"
    gate = threading.Event()
    sid, read_id, editor, pending, script = await asked_to_edit(lsp, fake_anthropic, gate)
    try:
        params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": read_id}
        compacting = asyncio.ensure_future(lsp.request(protocol.COMPACT, params))
        assert await asyncio.to_thread(script.held.wait, WAIT_SECONDS)
        editor.outcome = outcome
        editor.hold.set()
        await lsp.recorder.wait_for(lambda: len(fake_anthropic.message_requests()) == 4 or None)
    finally:
        editor.hold.set()
        gate.set()
    compacted = await compacting
    await pending

    messages = (await lsp.get(sid))["messages"]
    call_at, result = the_call(messages)
    if outcome == "deny":  # the call showed nothing: the file comes back as it was
        assert [f["uri"] for f in compacted["restoredFiles"]] == [utils.as_uri()]
        ((at, copy),) = copies(messages)
        assert at < call_at and fenced(copy) == BEFORE == utils.read_text()
    else:  # the edit applied shows the file, as a kept one does: no copy edited twice
        assert compacted["restoredFiles"] == [] and copies(messages) == []
        assert result["content"].startswith("Applied: ") and utils.read_text() == AFTER


async def test_a_kept_mention_of_the_files_path_does_not_stand_for_its_text(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The model said which file it would edit, by its full path, with the call: the kept
    mention counted as showing the file, so nothing came back after the compaction, and
    the edit denied left the model with a path and no copy of what the file holds."""
    options = {**WITH_KEY, "summarizer": "extractive"}
    lsp: Harness = await start_server(options=options, capabilities=asking())
    utils = lsp.workspace / "utils.py"
    said = f"I'll rename parse_date in {utils}."
    sid, read_id, editor, pending, _ = await asked_to_edit(lsp, fake_anthropic, said=said)
    try:
        params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": read_id}
        compacted = await lsp.request(protocol.COMPACT, params)
        assert [f["uri"] for f in compacted["restoredFiles"]] == [utils.as_uri()]
        editor.outcome = "deny"
    finally:
        editor.hold.set()
    await pending

    messages = fake_anthropic.message_requests()[-1].body["messages"]
    ((at, copy),) = copies(messages)
    assert fenced(copy) == BEFORE == utils.read_text()
    assert at < the_call(messages)[0]
