"""Auto-compact's pause (repeated failures, or thrashing) outlives a restart: the transcript
records when it starts and ends, so a restarted server does not try again (each try asks
for a summary of the whole context) until a manual compaction resumes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.meta_records import AutoPause, read_auto_pause
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Encoder, Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-pause-kept-00000"


def service_on(data: Path, estimator: Estimator, summarizer: str = "anthropic") -> BatonService:
    settings = {
        "dataDir": str(data),
        "contextWindow": 20_000,
        "keepWindow": {"minTokens": 300, "minTextMessages": 2},
        "summarizer": summarizer,
    }
    service = BatonService(Settings.model_validate(settings), api_key=API_KEY, estimator=estimator)
    service.keep_calibration()
    return service


def message_posts(fake: FakeAnthropic) -> int:
    return len(fake.message_requests())


def pauses(data: Path, sid: str) -> list[Any]:
    lines = (data / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [e["autoCompactPaused"] for e in events if "autoCompactPaused" in e]


async def paused_by_failures(service: BatonService, fake: FakeAnthropic) -> str:
    sid = service.create("p", model="claude-haiku-4-5").session_id
    for n in range(3):
        fake.reply(f"Answer {n}. " * 100, usage={"input_tokens": 1_000 + 500 * n})
        await service.replies.send(sid, f"question {n} " * 60)
    fake.reply("Answer big. " * 100, usage={"input_tokens": 13_800})
    await service.replies.send(sid, "question big " * 60)
    for n in range(3):  # each send: a refused summary request, then the reply
        fake.error(400, "invalid_request_error", "summary refused")
        fake.reply(f"More {n}.", usage={"input_tokens": 13_900 + 10 * n})
        await service.replies.send(sid, f"again {n}")
    return sid


async def test_a_pause_after_repeated_failures_outlives_a_restart(
    tmp_path: Path, estimator: Estimator, cl100k: Encoder, fake_anthropic: FakeAnthropic
) -> None:
    data = tmp_path / "data"
    service = service_on(data, estimator)
    try:
        sid = await paused_by_failures(service, fake_anthropic)
        before = service.usage(sid)
        assert before.auto_compact_paused_by == "failures"
    finally:
        await service.close()
    assert [p["by"] for p in pauses(data, sid)] == ["failures"]
    assert "summary refused" in pauses(data, sid)[0]["reason"]

    again = service_on(data, Estimator(encoder=cl100k))
    try:
        after = again.usage(sid)
        assert after.auto_compact_paused and after.auto_compact_paused_by == "failures"
        assert after.text.headline == before.text.headline
        sent = message_posts(fake_anthropic)
        fake_anthropic.reply("Cold reply.", usage={"input_tokens": 13_990})
        await again.replies.send(sid, "after the restart")
        assert message_posts(fake_anthropic) - sent == 1  # the reply alone: no summary tried

        # a manual compaction resumes it, and the transcript says so
        again.configure({"summarizer": "extractive"})
        await again.compaction.compact(sid, CompactRequest(direction="all"))
        assert not again.usage(sid).auto_compact_paused
    finally:
        await again.close()
    assert pauses(data, sid)[-1] is None

    third = service_on(data, Estimator(encoder=cl100k))
    try:
        assert not third.usage(sid).auto_compact_paused
    finally:
        await third.close()


async def test_a_thrashing_pause_comes_back_as_thrashing(
    tmp_path: Path, estimator: Estimator
) -> None:
    data = tmp_path / "data"
    service = service_on(data, estimator, "extractive")
    try:
        session = service.create("t")
        session.keep_auto_pause(AutoPause("thrashing", "the context refilled within 3 turns"))
    finally:
        await service.close()
    again = service_on(data, estimator, "extractive")
    try:
        usage = again.usage(session.session_id)
        assert usage.auto_compact_paused_by == "thrashing"
        assert again.upkeep.auto.last_error(session.session_id) == (
            "the context refilled within 3 turns"
        )
    finally:
        await again.close()


def test_what_is_read_from_a_pause_record() -> None:
    kept = AutoPause("failures", "x")
    assert read_auto_pause(None, kept) is None  # resumed
    assert read_auto_pause({"by": "thrashing", "reason": "y"}, None) == AutoPause("thrashing", "y")
    for bad in ("paused", {"by": "user", "reason": ""}, {"by": "failures"}, [1], 3):
        assert read_auto_pause(bad, kept) is kept  # not read: what was in force stays
    long = read_auto_pause({"by": "failures", "reason": "r" * 10_000}, None)
    assert long is not None and len(long.reason) == 2_000
