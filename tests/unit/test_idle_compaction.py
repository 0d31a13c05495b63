"""Idle compaction (opt-in): a session idle past the prompt cache's lifetime and above a
share of its window is compacted in the background, undone like any compaction, never
while a reply, a compaction or a draft is open. On the fake API, through the service."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.automatic.idle import cache_lifetime
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import Message, MessageInput, TextBlock
from baton.core.errors import SummarizerFailed
from baton.core.service.events import AutoCompacted, AutoCompactStarted, Event
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.draft import Draft
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-idle-0000000000"


def words(count: int) -> str:
    return " ".join(f"lorem{i % 10}" for i in range(count))


def make_service(tmp_path: Path, estimator: Estimator, **idle: Any) -> BatonService:
    settings = Settings.model_validate(
        {
            "dataDir": str(tmp_path / "data"),
            "summarizer": "extractive",
            "contextWindow": 40_000,
            "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
            "idleCompact": {"enabled": True, "percent": 30} | idle,
        }
    )
    service = BatonService(settings, api_key=KEY, estimator=estimator)
    service.idle.timers.short, service.idle.timers.long, service.idle.timers.slack = 0.2, 30, 0
    return service


async def filled(service: BatonService, fake: FakeAnthropic, turns: int = 8) -> str:
    session = service.create("idle", model="claude-haiku-4-5")
    for turn in range(turns):
        service.append(
            session.session_id,
            [
                MessageInput(role="user", content=f"step {turn}: " + words(700)),
                MessageInput(role="assistant", content=f"did {turn}: " + words(700)),
            ],
        )
    fake.reply("Done.", usage={"input_tokens": 22_000, "output_tokens": 3})
    await service.replies.send(session.session_id, "carry on")  # the fake API's reply: activity
    return session.session_id


async def settle(seconds: float = 0.8) -> None:
    await asyncio.sleep(seconds)


async def test_an_idle_session_above_the_share_is_compacted_and_can_be_undone(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = make_service(tmp_path, estimator)
    try:
        sid = await filled(service, fake_anthropic)
        before = list(service.session(sid).view)
        await settle()
        session = service.session(sid)
        assert session.compactions == 1
        boundary = session.boundaries[session.active[-1]]
        assert boundary.trigger == "auto"
        service.compaction.uncompact(sid)
        assert service.session(sid).view == before
    finally:
        await service.close()


async def test_activity_starts_the_wait_again(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = make_service(tmp_path, estimator)
    service.idle.timers.short = 0.6
    try:
        sid = await filled(service, fake_anthropic)
        for _ in range(3):
            await asyncio.sleep(0.3)
            service.append(sid, [MessageInput(role="user", content="one more thing")])
            service.append(sid, [MessageInput(role="assistant", content="sure")])
        assert service.session(sid).compactions == 0
        await settle(1.2)
        assert service.session(sid).compactions == 1
    finally:
        await service.close()


@pytest.mark.parametrize("why", ["draft", "replying", "below", "off"])
async def test_no_idle_compaction_when_it_must_not(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic, why: str
) -> None:
    idle = {"percent": 95} if why == "below" else {"enabled": False} if why == "off" else {}
    service = make_service(tmp_path, estimator, **idle)
    try:
        sid = await filled(service, fake_anthropic)
        if why == "draft":
            await service.draft_usage(sid, Draft(text="I am typing a long"))
        if why == "replying":
            service._runtimes.of(sid).replying = True
        await settle()
        assert service.session(sid).compactions == 0
    finally:
        await service.close()


async def test_a_draft_once_sent_lets_it_run_again(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = make_service(tmp_path, estimator)
    try:
        sid = await filled(service, fake_anthropic)
        await service.draft_usage(sid, Draft(text="typing"))
        fake_anthropic.reply("Sure.", usage={"input_tokens": 22_100, "output_tokens": 2})
        await service.replies.send(sid, "typing, now sent")
        await settle()
        assert service.session(sid).compactions == 1
    finally:
        await service.close()


def test_the_cache_lifetime_is_an_hour_when_the_request_asked_for_it() -> None:
    marker = {"type": "ephemeral", "ttl": "1h"}
    block = TextBlock.model_validate({"type": "text", "text": "hi", "cache_control": marker})
    plain = Message(role="user", content=[TextBlock(text="hi")])
    marked = Message(role="user", content=[block])
    assert cache_lifetime([plain], 300, 3600) == 300
    assert cache_lifetime([marked, plain], 300, 3600) == 3600


async def test_an_idle_compaction_is_told_and_does_not_close_the_breaker(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """An idle compaction is an auto-compaction: the panel hears of it as one
    (`baton/autoCompact`), and it neither runs while auto-compact is paused nor resumes it
    (only a manual compaction does)."""
    service = make_service(tmp_path, estimator)
    told: list[AutoCompacted] = []
    service.connect(lambda event: told.append(event) if isinstance(event, AutoCompacted) else None)
    try:
        sid = await filled(service, fake_anthropic)
        state = service._runtimes.auto_of(sid)
        state.failures = 1  # an auto-compaction failed before: a success clears the count
        await settle()
        assert service.session(sid).compactions == 1
        assert [event.outcome.outcome for event in told] == ["compacted"]
        outcome = told[0].outcome
        assert outcome.tokens_before > outcome.tokens_after
        assert outcome.message.startswith("Compacted while idle: ")
        assert state.failures == 0

        state.thrashing = True  # auto-compact paused: idle compaction waits for it too
        service.append(sid, [MessageInput(role="user", content="next: " + words(8_000))])
        await settle()
        assert service.session(sid).compactions == 1
        assert service.upkeep.auto.paused_by(sid) == "thrashing"
        assert len(told) == 1
    finally:
        await service.close()


async def test_the_compaction_an_idle_one_runs_keeps_the_breaker_open(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """What a paused auto-compact waits for is a manual compaction: one with trigger `auto`
    (what idle compaction commits) leaves it paused."""
    service = make_service(tmp_path, estimator, enabled=False)
    try:
        sid = await filled(service, fake_anthropic)
        service._runtimes.auto_of(sid).thrashing = True
        await service.compaction.compact(sid, CompactRequest(direction="all", trigger="auto"))
        assert service.upkeep.auto.paused_by(sid) == "thrashing"
        service.compaction.uncompact(sid)
        await service.compaction.compact(sid, CompactRequest(direction="all"))
        assert service.upkeep.auto.paused_by(sid) is None
    finally:
        await service.close()


async def test_an_idle_compaction_is_told_when_it_starts_and_when_it_fails(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """Its start is told (an ACP client shows it in progress), so its end is told too, even
    when it fails; a failure of this extra compaction does not count towards the breaker."""
    service = make_service(tmp_path, estimator)
    told: list[Event] = []
    service.connect(
        lambda event: (
            told.append(event) if isinstance(event, AutoCompacted | AutoCompactStarted) else None
        )
    )

    async def failing(session_id: str, request: CompactRequest) -> Any:
        raise SummarizerFailed("the summary service is down")

    service.idle._compact = failing
    try:
        sid = await filled(service, fake_anthropic)
        await settle()
        assert [type(event).__name__ for event in told] == ["AutoCompactStarted", "AutoCompacted"]
        start, end = told
        assert isinstance(start, AutoCompactStarted) and start.reason == "idle"
        assert isinstance(end, AutoCompacted) and end.outcome.outcome == "failed"
        assert end.outcome.message.startswith("Compaction while idle failed (the summary")
        assert service.session(sid).compactions == 0
        assert service.upkeep.auto.failures(sid) == 0
    finally:
        await service.close()
