"""R2: API faults on the fake API end in a retry or a clean error, and a failed compaction
leaves the data directory byte-identical.

One server meets each fault in turn: 429, 529 and 500 (retried, then given up on), a
timeout, a stream cut mid-reply, an error event inside a stream, 413, and a reply that
holds no summary; for compactions and for replies alike.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from lsp_harness import Harness, conversation

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-faults-0123456789"
CLEAN_CODES = {"summarizer_failed", "api_error", "prompt_too_long"}
FAST = "5"  # retry-after-ms: the SDK retries at once instead of backing off


def snapshot(data_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(data_dir)): p.read_bytes() for p in data_dir.rglob("*") if p.is_file()
    }


def give_up(fake: FakeAnthropic, status: int, kind: str) -> None:
    """More failures than the client retries, so that the request fails."""
    fake.error(status, kind, f"fault {status}", retry_after_ms=FAST, times=4)


FAILURES: dict[str, Any] = {
    "429": lambda fake: give_up(fake, 429, "rate_limit_error"),
    "529": lambda fake: give_up(fake, 529, "overloaded_error"),
    "500": lambda fake: give_up(fake, 500, "api_error"),
    "413": lambda fake: [
        fake.error(413, "request_too_large", "request too large", times=1) for _ in range(6)
    ],
    "cut stream": lambda fake: [fake.reply("<summary>half", cut_after=3) for _ in range(4)],
    "error event": lambda fake: [
        fake.reply("<summary>half", cut_after=3, stream_error=("overloaded_error", "busy"))
        for _ in range(4)
    ],
    "no summary": lambda fake: [fake.reply("   ") for _ in range(4)],
}


async def test_every_api_fault_ends_in_a_retry_or_a_clean_error(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp: Harness = await start_server(
        options={"anthropicApiKey": API_KEY, "baton": {"summarizer": "anthropic"}},
        env={"BATON_API_TIMEOUT": "1"},
    )
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(4)))["messageIds"]
    compact = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    outcomes: dict[str, str] = {}

    for name, script in FAILURES.items():
        before = snapshot(lsp.data_dir)
        script(fake_anthropic)
        error = await lsp.error(protocol.COMPACT, compact)
        assert error.baton_code in CLEAN_CODES, (name, error)
        assert "Traceback" not in error.message
        assert snapshot(lsp.data_dir) == before, f"{name}: the data dir changed"
        outcomes[name] = error.baton_code or ""
        fake_anthropic.clear()  # the scripts a request that gave up did not use

    # a timeout: the fake holds the stream past BATON_API_TIMEOUT (every attempt)
    before = snapshot(lsp.data_dir)
    gates = [threading.Event() for _ in range(4)]
    for gate in gates:
        fake_anthropic.reply("<summary>late</summary>", hold_after=0, gate=gate)
    try:
        error = await lsp.error(protocol.COMPACT, compact)
    finally:
        for gate in gates:
            gate.set()
    assert error.baton_code in CLEAN_CODES
    assert snapshot(lsp.data_dir) == before
    fake_anthropic.clear()  # the scripts a request that gave up did not use

    # a fault the client retries past: one 429, one 529, then the summary
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after_ms=FAST)
    fake_anthropic.error(529, "overloaded_error", "busy", retry_after_ms=FAST)
    fake_anthropic.reply("<summary>The first exchanges, summarized.</summary>")
    done = await lsp.request(protocol.COMPACT, compact)
    assert done["summary"].startswith("The first exchanges")
    assert fake_anthropic.pending == 0

    # replies: a fault ends in a clean error that keeps the prompt, a retried one in a reply
    give_up(fake_anthropic, 500, "api_error")
    failed = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid, "content": "next?"})
    assert failed.baton_code == "api_error"
    fake_anthropic.clear()  # the scripts a request that gave up did not use
    fake_anthropic.reply("partial", cut_after=4)
    cut = await lsp.error(protocol.SESSION_SEND, {"sessionId": sid})
    assert cut.baton_code == "api_error"
    kept = (await lsp.get(sid))["messages"]
    assert kept[-2]["id"] == failed.data["promptMessageId"]  # the prompt was kept
    assert kept[-1]["stopReason"] == "interrupted"  # and what arrived of the cut reply
    fake_anthropic.clear()  # the scripts a request that gave up did not use
    fake_anthropic.error(529, "overloaded_error", "busy", retry_after_ms=FAST)
    fake_anthropic.reply("Here it is.")
    sent = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "again"})
    assert sent["message"]["content"][0]["text"] == "Here it is."
    print(f"R2: {len(outcomes) + 1} failing faults, 2 retried ones: {outcomes}")
