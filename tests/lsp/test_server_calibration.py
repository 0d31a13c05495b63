"""Real API usage appended by a client calibrates the estimate of every session."""

from __future__ import annotations

from lsp_harness import Harness, assistant, conversation, user

from baton import protocol


async def usage_of(lsp: Harness, session_id: str) -> dict:
    result: dict = await lsp.request(protocol.USAGE, {"sessionId": session_id})
    return result


async def test_an_appended_reply_with_real_usage_calibrates_the_estimates(lsp: Harness) -> None:
    estimated = (await lsp.create(title="only estimates"))["sessionId"]
    await lsp.append(estimated, *conversation(3))
    before = await usage_of(lsp, estimated)
    assert before["estimated"] is True

    # a client that talks to the model itself appends the reply with the API's usage:
    # the prompt was twice what Baton estimated
    measured = (await lsp.create(title="with usage"))["sessionId"]
    await lsp.append(measured, *conversation(3), user("and the last part?"))
    prompt_estimate = (await usage_of(lsp, measured))["usedTokens"]
    real = {"inputTokens": 2 * prompt_estimate, "outputTokens": 7}
    await lsp.append(measured, assistant("here it is", usage=real, apiMessageId="msg_real_1"))

    after = await usage_of(lsp, estimated)
    assert after["estimated"] is True
    assert after["usedTokens"] > before["usedTokens"] * 1.2  # the estimator learned
    anchored = await usage_of(lsp, measured)
    assert anchored["estimated"] is False


async def test_the_meter_and_diagnostics_of_another_session_follow_the_calibration(
    lsp: Harness,
) -> None:
    """`usageChanged` comes after anything that changes usage: a reply in one session that
    moves the shared factor moves the others' figures, and their meters and diagnostics
    follow (before, they stayed on the figure told before the reply)."""
    estimated = (await lsp.create(title="only estimates"))["sessionId"]
    await lsp.append(estimated, *conversation(3))
    before = (await usage_of(lsp, estimated))["usedTokens"]
    measured = (await lsp.create(title="with usage"))["sessionId"]
    await lsp.append(measured, *conversation(3), user("and the last part?"))
    prompt_estimate = (await usage_of(lsp, measured))["usedTokens"]
    mark = lsp.recorder.mark()

    real = {"inputTokens": 2 * prompt_estimate, "outputTokens": 7}
    await lsp.append(measured, assistant("here it is", usage=real, apiMessageId="msg_real_1"))

    now = (await usage_of(lsp, estimated))["usedTokens"]
    assert now > before
    meter = await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["sessionId"] == estimated, after=mark
    )
    assert meter["usage"]["usedTokens"] == now
    shown = await lsp.diagnostics(estimated, lambda p: f"{now:,}" in p.diagnostics[0].message)
    assert shown.version == (await lsp.render(estimated))["version"]


async def test_an_appended_message_without_usage_teaches_nothing(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(3))
    before = await usage_of(lsp, sid)
    other = (await lsp.create())["sessionId"]
    await lsp.append(other, *conversation(3), user("q"), assistant("a"))
    assert (await usage_of(lsp, sid))["usedTokens"] == before["usedTokens"]
