"""Over the wire (issue 19, item 1): a client declares its own system prompt and tools, and
after a compaction the result, the usage and the diagnostic show one estimated figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsp_harness import Harness, assistant, conversation

from baton import protocol
from baton.core.usage.estimator import Estimator, load_cl100k
from baton_testkit.claude_code_gen import generate
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import SizeOfRequest, prose, raw_size

OVERHEAD = 25_000  # what this client sends besides the messages


async def test_a_declared_context_counts_on_create_and_append(lsp: Harness) -> None:
    declared = {"system": "You are a terse assistant. " * 40, "toolsTokens": 3_000}
    sid = (await lsp.create(title="own tools", clientContext=declared))["sessionId"]
    first = await lsp.append(sid, *conversation(1))
    assert first["usage"]["breakdown"]["tools"] == 3_000
    assert first["usage"]["breakdown"]["system"] > 200
    again = await lsp.request(
        protocol.SESSION_APPEND,
        {
            "sessionId": sid,
            "messages": conversation(1),
            "clientContext": {"toolsTokens": 5_000},
        },
    )
    assert again["usage"]["breakdown"]["tools"] == 5_000
    assert again["usage"]["breakdown"]["system"] == first["usage"]["breakdown"]["system"]


async def test_a_declaration_with_a_size_and_a_text_is_refused(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    error = await lsp.error(
        protocol.SESSION_APPEND,
        {
            "sessionId": sid,
            "messages": conversation(1),
            "clientContext": {"systemTokens": 10, "system": "both"},
        },
    )
    assert error.data["code"] == "invalid_params"
    assert (await lsp.get(sid))["messages"] == []  # nothing was written


async def test_after_a_compaction_result_usage_and_diagnostic_agree(lsp: Harness) -> None:
    sid = (await lsp.create(title="long"))["sessionId"]
    messages = conversation(40)
    await lsp.append(sid, *messages[:-1])
    view = (await lsp.get(sid))["messages"]
    prompt = sum(m["tokens"] for m in view)
    reply = assistant("Answer 39: done.", apiMessageId="msg_last")
    # the API saw this client's own prompt and tools besides the messages
    reply["usage"] = {"inputTokens": OVERHEAD + prompt, "outputTokens": 12}
    before = (await lsp.append(sid, reply))["usage"]
    assert before["basis"] == "api" and not before["estimated"]

    preview = await lsp.request(protocol.COMPACT, {"sessionId": sid, "dryRun": True})
    result = await lsp.request(protocol.COMPACT, {"sessionId": sid})
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert result["postTokens"] == usage["usedTokens"] == preview["postTokens"]
    assert usage["usedTokens"] > OVERHEAD  # the client's part did not vanish
    assert usage["estimated"] and usage["basis"] == "compacted"
    assert usage["breakdown"]["unattributed"] > 0
    published = await lsp.latest_diagnostics(sid)
    found = [d for d in published.diagnostics if d.code == "context-usage"]
    assert found[0].message == usage["text"]["headline"]
    assert f"({usage['usedTokens']:,} / " in found[0].message
    assert "estimated until the next reply" in found[0].message


async def test_a_restarted_server_shows_a_compacted_session_as_the_one_before_did(
    start_server: Any,
) -> None:
    """The estimate after a compaction is calibrated by what replies taught the server: the
    data dir keeps that, so the meter does not move when the editor starts it again."""
    lsp = await start_server()
    sid = (await lsp.create(title="long"))["sessionId"]
    messages = conversation(40)
    await lsp.append(sid, *messages[:-1])
    prompt = sum(m["tokens"] for m in (await lsp.get(sid))["messages"])
    reply = assistant("Answer 39: done.", apiMessageId="msg_last")
    reply["usage"] = {"inputTokens": int(prompt * 1.3), "outputTokens": 12}  # teaches a factor
    await lsp.append(sid, reply)
    await lsp.request(protocol.COMPACT, {"sessionId": sid})
    shown = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert shown["basis"] == "compacted"
    await lsp.close()
    assert (lsp.data_dir / "calibration.json").is_file()

    again = await start_server()
    restarted = await again.request(protocol.USAGE, {"sessionId": sid})
    assert restarted["usedTokens"] == shown["usedTokens"]
    assert restarted["breakdown"] == shown["breakdown"]


async def test_what_batons_own_replies_showed_besides_its_estimate_is_not_a_clients(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    keep = {"minTokens": 500, "minTextMessages": 2, "maxTokens": 1_000}
    options = {"anthropicApiKey": "sk-ant-test-0123456789abcdefghij", "keepWindow": keep}
    lsp = await start_server(options={**options, "summarizer": "extractive"})
    sid = (await lsp.create())["sessionId"]
    for n in range(6):  # usages that run ahead of the estimate of what Baton sent
        usage = {"input_tokens": 3_000 + 1_500 * n, "output_tokens": 200}
        fake_anthropic.reply(f"answer {n} " + "words " * 200, usage=usage)
        question = f"question {n} " + "lorem ipsum " * 300
        await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": question})
    await lsp.request(protocol.COMPACT, {"sessionId": sid})
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["basis"] == "compacted" and usage["breakdown"]["unattributed"] > 0
    label = usage["text"]["labels"]["unattributed"]
    assert label == "Unattributed (what the API counted beyond Baton's estimate of its request)"


async def test_an_auto_compactions_after_figure_is_the_request_it_leaves(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """The fake counts each request as the server's estimator does (a factor of 1), so a
    request near the thresholds holds the budget note: the last one before the
    auto-compaction did, the one it leaves does not, and its `tokensAfter` is that
    request's size, not more by the note before (which the figure carried held)."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    options = {"anthropicApiKey": "sk-ant-test-carried-note-00", "contextWindow": 12_000}
    lsp: Harness = await start_server(options={**options, "summarizer": "extractive"})
    sid = (await lsp.create())["sessionId"]
    told: list[Any] = []
    for n in range(1, 30):
        asked = len(fake_anthropic.message_requests())
        fake_anthropic.reply(f"Answer {n}. " + prose(2_000 + n, 150))
        params = {"sessionId": sid, "content": f"Q{n}: " + prose(1_000 + n, 120)}
        await lsp.request(protocol.SESSION_SEND, params)
        told = lsp.recorder.of(protocol.AUTO_COMPACT)
        if told:
            break
    assert told and told[0]["outcome"] == "compacted", told
    before, body = (fake_anthropic.message_requests()[i].body for i in (asked - 1, asked))
    assert len(before["messages"][-1]["content"]) == 2  # the prompt, and the note after it
    assert len(body["messages"][-1]["content"]) == 1  # the prompt alone
    assert told[0]["tokensAfter"] == raw_size(estimator, body)


@pytest.mark.parametrize(("era", "seed"), [("recent", 7), ("newest", 7), ("newest", 12)])
async def test_a_compacted_imports_figure_leaves_out_the_kept_turns_thinking_no_request_sends(
    start_server, fake_anthropic: FakeAnthropic, tmp_path: Path, era: str, seed: int
) -> None:
    """An imported reply's thinking counts as the client that wrote the file sent it while
    the view before it is the one it came after; a compaction before it changes that view,
    and no request sends it again (Baton's leaves it out). The figure after a compaction of
    a session imported from Claude Code counted it still: its postTokens and meter stood
    72 tokens (the recent era's seed 7) above the request that followed, besides what the
    file's client sent of its own (`unattributed`, carried). The fake counts each request
    as the estimator does (a factor of 1)."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    keep = {"minTokens": 500, "minTextMessages": 2, "maxTokens": 2_000}
    options = {"anthropicApiKey": "sk-ant-test-imported-thinking", "keepWindow": keep}
    lsp: Harness = await start_server(options={**options, "summarizer": "extractive"})
    made = generate(seed, era=era, compactions=1, turns=16, repairs=False, media=False)
    source = made.write(tmp_path / "claude-code.jsonl")
    sid = (await lsp.request(protocol.SESSION_IMPORT, {"path": str(source)}))["sessionId"]
    result = await lsp.request(protocol.COMPACT, {"sessionId": sid})
    kept = (await lsp.get(sid))["messages"]
    assert any(b["type"] == "thinking" for m in kept for b in m["content"])  # what it is about
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["usedTokens"] == result["postTokens"]

    fake_anthropic.reply("Done.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Go on"})
    body = fake_anthropic.message_requests()[-1].body
    assert not [b for m in body["messages"] for b in m["content"] if b["type"] == "thinking"]
    prompt = body["messages"][-1]["content"].pop()
    assert prompt == {"type": "text", "text": "Go on"}
    if not body["messages"][-1]["content"]:
        body["messages"].pop()
    sent = raw_size(estimator, {"system": body.get("system"), "messages": body["messages"]})
    breakdown = usage["breakdown"]
    assert usage["usedTokens"] - breakdown["unattributed"] - breakdown["tools"] == sent
