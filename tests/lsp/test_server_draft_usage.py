"""A pending prompt's usage (`baton/usage` with a draft), a model switch, auto-compact's notices."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness, assistant, conversation, user
from lsprotocol import types

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-draft-0123456789"
SMALL: dict[str, Any] = {
    "summarizer": "extractive",
    "contextWindow": 20_000,  # auto-compact threshold 13,400
    "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
}
OFF = {**SMALL, "autoCompact": {"enabled": False}}
PIXEL_PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)


def words(n: int) -> str:
    """About `n` tokens of text."""
    return " hello" * n


async def draft_usage(lsp: Harness, sid: str, **draft: Any) -> dict[str, Any]:
    result: dict[str, Any] = await lsp.request(protocol.USAGE, {"sessionId": sid, "draft": draft})
    return result


async def test_a_draft_is_counted_as_if_sent_and_nothing_is_written(start_server) -> None:
    lsp: Harness = await start_server(options=OFF)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(3))
    before = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert "draft" not in before

    pending = await draft_usage(lsp, sid, text=words(200))
    info = pending["draft"]
    assert info["tokens"] > 200
    assert info["usedBefore"] == before["usedTokens"]
    assert pending["usedTokens"] == before["usedTokens"] + info["tokens"]
    assert pending["breakdown"]["messages"] == before["breakdown"]["messages"] + info["tokens"]
    assert info["verdict"] == "fits" and "message" not in info

    # an attachment counts too (an image: its size from its header)
    source = {"type": "base64", "media_type": "image/png", "data": PIXEL_PNG}
    image = {"type": "image", "source": source}
    with_image = await draft_usage(lsp, sid, text=words(200), attachments=[image])
    assert with_image["draft"]["tokens"] > info["tokens"]

    # nothing changed: same messages, same usage
    assert len((await lsp.get(sid))["messages"]) == 6
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["usedTokens"] == before[
        "usedTokens"
    ]


async def test_a_draft_that_is_no_prompt_is_invalid_params(start_server) -> None:
    lsp: Harness = await start_server(options=OFF)
    sid = (await lsp.create())["sessionId"]
    call = {"type": "tool_use", "id": "t1", "name": "x", "input": {}}
    error = await lsp.error(protocol.USAGE, {"sessionId": sid, "draft": {"attachments": [call]}})
    assert error.baton_code == "invalid_params"
    error = await lsp.error(protocol.USAGE, {"sessionId": sid, "draft": {"text": 7}})
    assert error.baton_code == "invalid_params"
    missing = await lsp.error(protocol.USAGE, {"sessionId": "s_gone", "draft": {"text": "x"}})
    assert missing.baton_code == "session_not_found"


async def test_the_verdict_says_what_send_would_do(start_server) -> None:
    lsp: Harness = await start_server(options=SMALL)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(6, words=90))
    now = await lsp.request(protocol.USAGE, {"sessionId": sid})
    room = now["autoCompactThreshold"] - now["usedTokens"]
    assert room > 1_000
    assert (await draft_usage(lsp, sid, text=words(100)))["draft"]["verdict"] == "fits"

    crossing = await draft_usage(lsp, sid, text=words(room))
    assert crossing["usedTokens"] >= crossing["autoCompactThreshold"]
    assert crossing["draft"]["verdict"] == "autoCompact"
    assert "compacts the conversation first" in crossing["draft"]["message"]

    too_large = await draft_usage(lsp, sid, text=words(now["blockingLimit"]))
    assert too_large["draft"]["verdict"] == "tooLarge"
    assert "cannot fit even after a compaction" in too_large["draft"]["message"]
    assert too_large["state"] == "blocking"


async def test_over_the_limit_with_auto_compact_off_the_verdict_is_compact_first(
    start_server,
) -> None:
    lsp: Harness = await start_server(options=OFF)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(6, words=90))
    now = await lsp.request(protocol.USAGE, {"sessionId": sid})
    over = now["blockingLimit"] - now["usedTokens"]
    pending = await draft_usage(lsp, sid, text=words(over))
    assert pending["usedTokens"] >= pending["blockingLimit"]
    assert pending["draft"]["verdict"] == "compactFirst"
    assert "auto-compact is off" in pending["draft"]["message"]


async def test_switching_a_1m_session_to_a_200k_model_re_evaluates_its_budget(
    start_server,
) -> None:
    lsp: Harness = await start_server(options={"summarizer": "extractive"})
    sid = (await lsp.create(model="claude-sonnet-4-5[1m]", systemPrompt=""))["sessionId"]
    real = {"input_tokens": 300_000, "output_tokens": 20}
    await lsp.append(sid, user("read the whole repository"), assistant("done", usage=real))
    before = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert before["contextWindow"] == 1_000_000 and before["state"] == "ok"

    mark = lsp.recorder.mark()
    switched = await lsp.request(
        protocol.SESSION_SET_MODEL, {"sessionId": sid, "model": "claude-sonnet-4-5"}
    )
    assert switched["session"]["model"] == "claude-sonnet-4-5"
    usage = switched["usage"]
    assert usage["contextWindow"] == 200_000
    assert usage["usedTokens"] >= 300_000 and usage["state"] == "blocking"
    assert "over its limit" in switched["warning"]
    assert switched["warning"].endswith(": the next send compacts first.")  # auto-compact is on

    # said at once: the meter's notification, the change, and the document's diagnostic
    published = await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["model"] == "claude-sonnet-4-5", after=mark
    )
    assert published["usage"]["state"] == "blocking"
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "model", after=mark
    )
    diagnostics = await lsp.latest_diagnostics(sid)
    meter = next(d for d in diagnostics.diagnostics if d.code == "context-usage")
    assert meter.severity == types.DiagnosticSeverity.Error
    assert meter.message.endswith(
        f"blocked at {usage['blockingLimit']:,}: the next send compacts first"
    )

    # the next send compacts first (auto-compact is on), and the switch is on disk
    assert (await draft_usage(lsp, sid, text="next"))["draft"]["verdict"] == "autoCompact"
    assert (await lsp.get(sid))["session"]["model"] == "claude-sonnet-4-5"


async def test_a_switch_that_fits_has_no_warning_and_a_blank_model_is_refused(
    start_server,
) -> None:
    lsp: Harness = await start_server(options={"summarizer": "extractive"})
    sid = (await lsp.create(model="claude-sonnet-4-5"))["sessionId"]
    await lsp.append(sid, *conversation(2))
    switched = await lsp.request(
        protocol.SESSION_SET_MODEL, {"sessionId": sid, "model": "claude-opus-4-1"}
    )
    assert "warning" not in switched and switched["usage"]["model"] == "claude-opus-4-1"
    error = await lsp.error(protocol.SESSION_SET_MODEL, {"sessionId": sid, "model": "   "})
    assert error.baton_code == "invalid_params"
    assert (await lsp.get(sid))["session"]["model"] == "claude-opus-4-1"


async def test_a_successful_auto_compaction_is_announced(start_server) -> None:
    lsp: Harness = await start_server(options=SMALL)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(19, words=90))
    notice = await lsp.recorder.notification(protocol.AUTO_COMPACT, lambda p: p["sessionId"] == sid)
    assert notice["outcome"] == "compacted"
    assert notice["tokensBefore"] > notice["tokensAfter"]
    assert notice["message"].startswith("Auto-compacted:")
    assert (await lsp.get(sid))["session"]["compactions"] == 1


async def test_a_failed_auto_compaction_before_a_send_is_announced(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    options = {**OFF, "anthropicApiKey": API_KEY, "summarizer": "anthropic"}
    lsp: Harness = await start_server(options=options)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(19, words=90))
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"autoCompact": {"enabled": True}}})
    )
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["autoCompactEnabled"] is True
    )
    fake_anthropic.error(400, "invalid_request_error", "refused for the test", times=1)
    fake_anthropic.reply("the answer")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "what next?"})
    notice = await lsp.recorder.notification(protocol.AUTO_COMPACT, lambda p: p["sessionId"] == sid)
    assert notice["outcome"] == "failed"
    assert notice["tokensAfter"] == notice["tokensBefore"]
    assert "refused for the test" in notice["message"]
    assert "the request goes out with" in notice["message"]
