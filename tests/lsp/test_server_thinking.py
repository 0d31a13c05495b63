"""Thinking over LSP: the setting, thinking sent back while its prefix holds, and left out of
the turns an `up_to` compaction kept, against a fake API that checks both."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from lsp_harness import Harness

from baton import protocol
from baton.cli.main import main as cli_main
from baton.core.usage.estimator import Estimator, load_cl100k
from baton_testkit.fake_anthropic import FakeAnthropic, thinking_block, tool_use_block
from baton_testkit.request_size import SizeOfRequest, prose, raw_size

API_KEY = "sk-ant-test-0123456789abcdefghij"
MODEL = "claude-fable-5-1"  # preserved thinking: stale thinking would be a 400
SYSTEM = "You are a careful assistant."


def thinking_turns(body: dict[str, Any]) -> int:
    return sum(
        1
        for turn in body["messages"]
        if turn["role"] == "assistant" and any(b["type"] == "thinking" for b in turn["content"])
    )


async def test_thinking_goes_back_until_an_up_to_compaction_then_not_for_kept_turns(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    options = {"anthropicApiKey": API_KEY, "model": MODEL, "thinking": "adaptive"}
    options["tools"] = {"enabled": False}  # the client runs the tool: no workspace tools
    lsp = await start_server(options=options)
    sid = (await lsp.create(systemPrompt=SYSTEM, model=MODEL))["sessionId"]

    use = tool_use_block("Read", {"file_path": "src/app.py"}, id="toolu_app")
    fake_anthropic.reply(use, stop_reason="tool_use")
    first = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Read app.py"})
    assert first["message"]["content"][0]["type"] == "thinking"
    assert first["message"]["content"][0]["signature"]
    result = {"type": "tool_result", "tool_use_id": "toolu_app", "content": "print('hi')\n"}
    await lsp.append(sid, {"role": "user", "content": [result]})
    fake_anthropic.reply("app.py prints hi.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid})
    loop_request = fake_anthropic.message_requests()[-1].body
    assert loop_request["thinking"] == {"type": "adaptive"}
    assert loop_request["messages"][1]["content"][0]["type"] == "thinking"  # turn in progress
    for prompt in ("And the tests?", "Anything else?"):
        fake_anthropic.reply(f"Answer to: {prompt}")
        await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": prompt})
    before = fake_anthropic.message_requests()[-1].body
    assert thinking_turns(before) == 3  # every earlier reply's thinking went back

    view = (await lsp.get(sid))["messages"]
    pivot = view[3]["id"]  # the tool loop's answer: summarized with all before it
    fake_anthropic.reply("<summary>The user had app.py read; it prints hi.</summary>")
    compacted = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": pivot}
    )
    assert compacted["keptMessageIds"]
    summary_request = fake_anthropic.message_requests()[-1].body
    assert thinking_turns(summary_request) == 0  # a summary request sends no thinking
    fake_anthropic.reply("Still here.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Go on"})
    after = fake_anthropic.message_requests()[-1].body
    assert after["system"] == before["system"] == SYSTEM  # byte-stable across compaction
    assert thinking_turns(after) == 0  # the kept turns' prefix changed: no thinking
    assert fake_anthropic.thinking.dropped == []  # nothing stale reached the API
    kept = [m for m in (await lsp.get(sid))["messages"] if m["role"] == "assistant"]
    assert all(m.get("prefixHash") for m in kept)


async def test_a_bad_thinking_setting_warns_and_keeps_the_default(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(
        options={"anthropicApiKey": API_KEY, "model": "claude-sonnet-4-5", "thinking": 12}
    )
    sid = (await lsp.create(model="claude-sonnet-4-5"))["sessionId"]
    fake_anthropic.reply("Hi.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Hello"})
    assert "thinking" not in fake_anthropic.message_requests()[-1].body


async def test_baton_payload_of_a_served_session_sends_what_the_server_sends_next(
    start_server, fake_anthropic: FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    """`baton payload` of a session whose sends offered the workspace tools built its
    request with no tools, so every reply's thinking was "left out" (its prefix held the
    tools) while the server's next request sends it back; the file's tools are the last
    send's, as `baton usage` counts them."""
    options = {"anthropicApiKey": API_KEY, "model": MODEL, "thinking": "adaptive"}
    lsp = await start_server(options=options)
    (lsp.workspace / "notes.txt").write_text("line one\n")
    sid = (await lsp.create(systemPrompt=SYSTEM, model=MODEL))["sessionId"]
    fake_anthropic.reply(tool_use_block("read_file", {"path": "notes.txt"}), stop_reason="tool_use")
    fake_anthropic.reply("It says line one.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Read notes.txt"})
    path = str(lsp.data_dir / "sessions" / f"{sid}.jsonl")
    capsys.readouterr()
    assert cli_main(["payload", path, "--json"]) == 0
    told = json.loads(capsys.readouterr().out)

    fake_anthropic.reply("Nothing else.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Anything else?"})
    sent = fake_anthropic.message_requests()[-1].body
    assert told["request"]["tools"] == sent["tools"]
    assert [r["sent"] for r in told["thinking"]] == [True, True]
    prompt = {"role": "user", "content": [{"type": "text", "text": "Anything else?"}]}
    assert [*told["request"]["messages"], prompt] == sent["messages"]


async def shown(lsp: Harness, sid: str, capsys: pytest.CaptureFixture[str]) -> list[int]:
    """The used tokens of baton/usage (which the session's last usageChanged and its
    diagnostic come to show) and of `baton usage` of its transcript."""
    usage = (await lsp.request(protocol.USAGE, {"sessionId": sid}))["usedTokens"]

    def told() -> bool:
        notes = [p for p in lsp.recorder.of(protocol.USAGE_CHANGED) if p["sessionId"] == sid]
        return bool(notes) and notes[-1]["usage"]["usedTokens"] == usage

    await lsp.recorder.wait_for(told)
    diagnostic = (await lsp.latest_diagnostics(sid)).diagnostics[0].message
    assert f"({usage:,} / " in diagnostic
    capsys.readouterr()
    assert cli_main(["usage", str(lsp.data_dir / "sessions" / f"{sid}.jsonl"), "--json"]) == 0
    return [usage, json.loads(capsys.readouterr().out)["usedTokens"]]


async def test_a_reply_that_streamed_while_a_compaction_committed_is_shown_without_its_thinking(
    start_server,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The whole conversation is compacted while a reply is held mid-stream: no later
    request repeats the view that reply was made on, so its thinking goes back no more. The
    API counts here as the estimator does (a factor of 1): every figure the user sees is the
    next request's size, as it was before the reply came (its thinking had made each one 300
    tokens above it)."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    options = {"anthropicApiKey": API_KEY, "model": "claude-sonnet-4-5", "summarizer": "extractive"}
    lsp = await start_server(options={**options, "keepWindow": {"minTokens": 300}})
    monkeypatch.setenv("BATON_DATA_DIR", str(lsp.data_dir))
    sid = (await lsp.create(model="claude-sonnet-4-5"))["sessionId"]
    for n in range(6):
        fake_anthropic.reply(thinking_block(prose(50 + n, 80), f"s{n}"), prose(2000 + n, 200))
        await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": prose(n, 120)})
    gate = threading.Event()
    held = fake_anthropic.reply(
        thinking_block(prose(1, 150), "held"), prose(3, 100), hold_after=6, gate=gate
    )
    send = protocol.SESSION_SEND
    reply = asyncio.ensure_future(lsp.request(send, {"sessionId": sid, "content": prose(4, 50)}))
    try:
        assert await asyncio.to_thread(held.held.wait, 20)
        await lsp.request(protocol.COMPACT, {"sessionId": sid})
    finally:
        gate.set()
    await reply
    figures = await shown(lsp, sid, capsys)

    fake_anthropic.reply("Fine.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Next."})
    body = fake_anthropic.message_requests()[-1].body
    assert thinking_turns(body) == 0
    assert body["messages"].pop()["content"] == [{"type": "text", "text": "Next."}]
    assert figures == [raw_size(estimator, body)] * 2
