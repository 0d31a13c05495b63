"""A look at a session another server writes, by a client that only polls its usage."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness, conversation, user

from baton import protocol
from baton.core.usage.estimator import Estimator, load_cl100k
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import SizeOfRequest, prose

API_KEY = "sk-ant-test-viewer-usage-0123456789"
FACTOR = 1.2


async def test_a_usage_poll_that_finds_the_session_moved_on_tells_the_reload(
    lsp: Harness, start_server: Any
) -> None:
    """A meter that only asks `baton/usage` of a session another server writes got the
    fresh figure, but no `sessionChanged` (`reload`) and no `usageChanged`: only a get or
    a render told them, so the session's document and diagnostics stayed behind the
    figure the meter showed."""
    sid = (await lsp.create(title="shared"))["sessionId"]
    await lsp.append(sid, *conversation(3))
    viewer = await start_server()
    first = await viewer.request(protocol.USAGE, {"sessionId": sid})
    await lsp.append(sid, user("and one more thing " * 200))
    heard = len(viewer.recorder.received)
    polled = await viewer.request(protocol.USAGE, {"sessionId": sid})
    assert polled["usedTokens"] > first["usedTokens"]  # the fresh figure
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    moved = await viewer.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["sessionId"] == sid, heard
    )
    assert moved["usage"]["usedTokens"] == polled["usedTokens"]
    rendered = await viewer.render(sid)  # the document had the new message already
    assert "and one more thing" in rendered["text"]


class CountedAtAFactor(SizeOfRequest):
    """The fake's usage: what each request was sent, at 1.2 times the estimator's count."""

    def usage(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> dict[str, int]:
        usage = super().usage(body, reply)
        return {**usage, "input_tokens": round(usage["input_tokens"] * FACTOR)}


async def test_a_viewer_started_before_the_writer_learned_shows_its_figure_after_a_compaction(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """Two windows on one data dir: the second shows the session the first writes
    (read-only there). The writer's replies teach its calibration (the API counts 1.2 times
    the tokenizer here) and keep it in the data dir; after its compaction the figure is an
    estimate, which the viewer made at the factor it started with (1.0), the difference
    shown as "unattributed" (what the client would send besides): after 20 turns it said
    15,631 tokens, 7,125 of them unattributed, where the writer said 9,972 and the next
    request was 10,207 (here, after 12, 4,233 unattributed where the writer had none)."""
    estimator = Estimator(encoder=load_cl100k())
    fake_anthropic.prompt_cache = CountedAtAFactor(estimator)  # type: ignore[assignment]
    options = {
        "anthropicApiKey": API_KEY,
        "summarizer": "extractive",
        "keepWindow": {"minTokens": 300, "maxTokens": 2_000},
    }
    writer = await start_server(options=options)
    sid = (await writer.create(model="claude-sonnet-4-5"))["sessionId"]
    viewer = await start_server(options=options)
    for n in range(12):
        fake_anthropic.reply(prose(2_000 + n, 600))
        await writer.request(protocol.SESSION_SEND, {"sessionId": sid, "content": prose(n, 300)})
    await writer.request(protocol.COMPACT, {"sessionId": sid})

    written = await writer.request(protocol.USAGE, {"sessionId": sid})
    viewed = await viewer.request(protocol.USAGE, {"sessionId": sid})

    assert viewed["basis"] == written["basis"] == "compacted"
    assert viewed["breakdown"]["unattributed"] == written["breakdown"]["unattributed"]
    assert abs(viewed["usedTokens"] - written["usedTokens"]) <= 2, (viewed, written)
    await viewer.recorder.notification(protocol.USAGE_CHANGED, lambda p: p["sessionId"] == sid)
    told = [p for p in viewer.recorder.of(protocol.USAGE_CHANGED) if p["sessionId"] == sid]
    assert told[-1]["usage"]["usedTokens"] == viewed["usedTokens"]  # its meter as it answered
