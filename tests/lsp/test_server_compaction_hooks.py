"""Compaction hooks over the wire (the user's hooks file, `BATON_HOOKS_FILE`): a compaction
is announced as it commits, while its PostCompact hook still runs; a cancel that arrives
then comes too late; and the summary written ahead of auto-compact runs the hooks too."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsp_harness import WAIT_SECONDS, Harness, conversation, user
from lsprotocol import types
from test_server_background_compact import MODEL, compacted, grow_to
from test_server_send import outcome, started_request

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply

OFFLINE: dict[str, Any] = {
    "summarizer": "extractive",
    "keepWindow": {"minTokens": 300, "minTextMessages": 2, "maxTokens": 1_500},
}
SMALL: dict[str, Any] = {  # auto-compact threshold 13,400
    "contextWindow": 20_000,
    "summarizer": "extractive",
    "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
}
HELD_HOOK = """\
import pathlib, sys, time
pathlib.Path({told!r}).write_text(sys.stdin.read())
pathlib.Path({started!r}).touch()
while not pathlib.Path({release!r}).exists():
    time.sleep(0.02)
pathlib.Path({finished!r}).touch()
"""
TELLING_HOOK = """\
import sys
with open({told!r}, "a") as told:
    told.write(sys.stdin.read().replace("\\n", " ") + "\\n")
"""


class HeldPostHook:
    """A PostCompact hook that writes what it was told, says it started, and runs until the
    test releases it (a gate, not a pause)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.told, self.started = folder / "told.json", folder / "started"
        self.release_file, self.finished = folder / "release", folder / "finished"
        script = folder / "held_hook.py"
        files = {"told": self.told, "started": self.started, "release": self.release_file}
        script.write_text(HELD_HOOK.format(**{k: str(v) for k, v in files.items()},
                                           finished=str(self.finished)))  # fmt: skip
        hooks = folder / "hooks.json"
        command = [sys.executable, str(script)]
        hooks.write_text(json.dumps({"PostCompact": [{"command": command, "timeout": 60}]}))
        self.env = {"BATON_HOOKS_FILE": str(hooks)}

    async def running(self) -> None:
        """Until the hook has started: the compaction has committed."""

        async def poll() -> None:
            while not self.started.exists():
                await asyncio.sleep(0.02)

        await asyncio.wait_for(poll(), WAIT_SECONDS)

    def release(self) -> None:
        self.release_file.touch()


def told_since(lsp: Harness, mark: int, method: str, sid: str) -> list[Any]:
    return [p for m, p in lsp.recorder.received[mark:] if m == method and p["sessionId"] == sid]


async def test_a_compaction_is_announced_as_it_commits_while_its_post_hook_still_runs(
    start_server, tmp_path: Path
) -> None:
    hook = HeldPostHook(tmp_path / "hook")
    lsp: Harness = await start_server(options=OFFLINE, env=hook.env)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(10, 120))
    before = await lsp.render(sid)
    mark = lsp.recorder.mark()
    compacting = asyncio.ensure_future(lsp.request(protocol.COMPACT, {"sessionId": sid}))
    try:
        await hook.running()
        # each answer comes after what the server sent before it: the announcement is in
        view = [m["id"] for m in (await lsp.get(sid))["messages"]]
        usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
        rendered = await lsp.render(sid)
        published = await lsp.latest_diagnostics(sid)
        assert not compacting.done()  # the hook holds the answer, not the announcement
    finally:
        hook.release()
    result = await compacting
    assert [m["id"] for m in (await lsp.get(sid))["messages"]] == view  # the new view, shown
    assert set(result["keptMessageIds"]) < set(view)
    reasons = [p["reason"] for p in told_since(lsp, mark, protocol.SESSION_CHANGED, sid)]
    meter = told_since(lsp, mark, protocol.USAGE_CHANGED, sid)
    assert reasons == ["compact"]  # once, while the hook ran
    assert meter and meter[-1]["usage"]["usedTokens"] == usage["usedTokens"]
    assert rendered["version"] != before["version"]
    assert [m["messageId"] for m in rendered["messages"]] == view
    assert published.version == rendered["version"]
    assert hook.finished.exists()


async def test_a_cancel_while_the_post_hook_runs_comes_too_late_and_the_answer_is_the_result(
    start_server, tmp_path: Path
) -> None:
    hook = HeldPostHook(tmp_path / "hook")
    lsp: Harness = await start_server(options=OFFLINE, env=hook.env)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(10, 120))
    params = {"sessionId": sid}
    future = await started_request(lsp, protocol.COMPACT, params, "compact-1")
    try:
        await hook.running()  # committed (20 messages -> 3), the PostCompact hook runs
        lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="compact-1"))
        usage = await lsp.request(protocol.USAGE, params)  # answered after the cancel was read
    finally:
        hook.release()
    result = await outcome(future)
    assert isinstance(result, dict), f"the committed compaction answered {result!r}"
    assert hook.finished.exists()  # the hook was not stopped
    assert json.loads(hook.told.read_text())["result"]["boundaryId"] == result["boundaryId"]
    got = await lsp.get(sid)
    assert got["session"]["compactions"] == 1
    assert set(result["keptMessageIds"]) < {m["id"] for m in got["messages"]}
    meter = told_since(lsp, 0, protocol.USAGE_CHANGED, sid)
    assert meter[-1]["usage"]["usedTokens"] == usage["usedTokens"] < result["preTokens"]
    # the session is not left compacting: the compaction can be undone
    await lsp.request(protocol.UNCOMPACT, params)
    assert (await lsp.get(sid))["session"]["compactions"] == 0


async def test_cancelling_the_auto_compaction_while_its_post_hook_runs_still_tells_the_change(
    start_server, tmp_path: Path
) -> None:
    hook = HeldPostHook(tmp_path / "hook")
    lsp: Harness = await start_server(options=SMALL, env=hook.env)
    sid = (await lsp.create())["sessionId"]
    mark = lsp.recorder.mark()
    await lsp.append(sid, *conversation(19, words=90))  # past the threshold: auto-compacts
    begin = await lsp.progress_begin("Baton: auto-compacting")
    try:
        await hook.running()
        cancel = types.WorkDoneProgressCancelParams(token=begin.token)
        lsp.client.window_work_done_progress_cancel(cancel)
        await lsp.request(protocol.USAGE, {"sessionId": sid})  # the cancel was read
    finally:
        hook.release()
    await lsp.progress_end(begin.token)
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert (await lsp.get(sid))["session"]["compactions"] == 1
    reasons = [p["reason"] for p in told_since(lsp, mark, protocol.SESSION_CHANGED, sid)]
    assert reasons == ["append", "compact"]
    meter = told_since(lsp, mark, protocol.USAGE_CHANGED, sid)
    assert meter[-1]["usage"]["usedTokens"] == usage["usedTokens"] < usage["autoCompactThreshold"]
    told = told_since(lsp, mark, protocol.AUTO_COMPACT, sid)
    assert [t["outcome"] for t in told] == ["compacted"]


async def test_the_summary_written_ahead_is_committed_with_the_hooks_around_it(
    start_server, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    told = tmp_path / "told.jsonl"
    script = tmp_path / "telling_hook.py"
    script.write_text(TELLING_HOOK.format(told=str(told)))
    hooks = tmp_path / "hooks.json"
    command = [sys.executable, str(script)]
    hooks.write_text(json.dumps({"PreCompact": [{"command": command}],
                                 "PostCompact": [{"command": command}]}))  # fmt: skip
    lsp: Harness = await start_server(options=MODEL, env={"BATON_HOOKS_FILE": str(hooks)})
    sid = (await lsp.create())["sessionId"]
    written = held_reply(fake_anthropic, "<summary>Written ahead: parts 0 to 9.</summary>")
    n = await grow_to(lsp, sid, 0.8)
    started = await lsp.progress_begin("Baton: summarizing ahead of auto-compact")
    assert written.gate is not None
    written.gate.set()
    await lsp.progress_end(started.token)

    mark = lsp.recorder.mark()
    await grow_to(lsp, sid, 1.0, start=n)
    await compacted(lsp, sid, mark)
    auto = await lsp.recorder.notification(protocol.AUTO_COMPACT, after=mark)  # after the hooks
    assert auto["outcome"] == "compacted"
    assert len(fake_anthropic.message_requests()) == 1  # the summary written ahead, committed
    events = [json.loads(line) for line in told.read_text().splitlines()]
    assert [(e["hook_event_name"], e["trigger"]) for e in events] == [
        ("PreCompact", "auto"),
        ("PostCompact", "auto"),
    ]
    view = (await lsp.get(sid))["messages"]
    assert "Written ahead" in str(view[0]["content"])
    assert events[1]["result"]["summary"].startswith("Written ahead")
    await lsp.append(sid, user("and the next question"))  # the session is not left compacting
