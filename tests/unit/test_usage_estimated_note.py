"""When the meter says its figure is estimated: whenever it is not the API's count anchored
on the view's last reply. An undo that leaves a later reply's usage stale (the view before
it changed), like one that leaves none valid, shows an estimate, and says so in the
headline, the meter and the panel alike; a reply confirms the figure again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.budget import Usage
from baton.core.usage.draft import Draft
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton.core.usage.wording import describe
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.services import service_on


@pytest.fixture
def service(tmp_path: Path, estimator: Estimator) -> Iterator[BatonService]:
    baton = service_on(tmp_path / "data", estimator, autoCompact={"enabled": False})
    yield baton
    baton.store.close()


def talk(turns: int) -> list[MessageInput]:
    said = []
    for n in range(turns):
        said.append(MessageInput(role="user", content=f"question {n}: " + "lorem ipsum " * 120))
        said.append(MessageInput(role="assistant", content=f"answer {n}: " + "dolor sit " * 120))
    return said


def says_estimated(usage: Usage) -> bool:
    """Whether every word of the usage says it is an estimate (and the flags agree)."""
    marks = [
        usage.estimated,
        usage.basis == "compacted",
        usage.text.meter.startswith("~"),
        "estimated" in usage.text.headline,
        " est." in usage.text.panel,
        usage.text.basis.startswith("Estimated"),
    ]
    assert len(set(marks)) == 1, (marks, usage.text)
    return marks[0]


async def compacted_three_times(service: BatonService, fake: FakeAnthropic) -> str:
    """A session compacted three times, with a reply after each compaction."""
    sid = service.create("three").session_id
    service.append(sid, talk(6))
    for n in range(3):
        await service.compaction.compact(sid, CompactRequest(direction="all"))
        service.append(sid, talk(1))
        fake.reply("noted", usage={"input_tokens": 9_000 + 800 * n, "output_tokens": 5})
        await service.replies.send(sid, f"after {n} " * 50)
        assert not says_estimated(service.usage(sid))
    return sid


async def test_every_undo_of_a_compaction_followed_by_replies_says_estimated(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    sid = await compacted_three_times(service, fake_anthropic)
    for _ in range(3):
        service.compaction.uncompact(sid)
        assert says_estimated(service.usage(sid))

    fake_anthropic.reply("confirmed", usage={"input_tokens": 12_000, "output_tokens": 5})
    await service.replies.send(sid, "and now?")
    confirmed = service.usage(sid)
    assert not says_estimated(confirmed) and confirmed.used_tokens == 12_005


async def test_an_undo_that_brings_the_last_reply_back_reads_it_as_the_api_counted_it(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    sid = service.create("one").session_id
    service.append(sid, talk(6))
    fake_anthropic.reply("noted", usage={"input_tokens": 9_000, "output_tokens": 5})
    await service.replies.send(sid, "first " * 50)
    await service.compaction.compact(sid, CompactRequest(direction="all"))
    assert says_estimated(service.usage(sid))
    service.compaction.uncompact(sid)
    undone = service.usage(sid)
    assert not says_estimated(undone) and undone.used_tokens == 9_005


async def test_a_rewind_that_leaves_no_reply_says_estimated_without_naming_a_compaction(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    """Editing the first prompt takes every reply out of the view: the figure is estimated
    (what the API saw besides the messages carried), and no compaction made it so."""
    sid = service.create("rewound").session_id
    fake_anthropic.reply("one", usage={"input_tokens": 5_000, "output_tokens": 5})
    await service.replies.send(sid, "first " * 200)
    service.compaction.rewind(sid, service.session(sid).view[0])
    usage = service.usage(sid)
    assert says_estimated(usage)
    assert "compaction" not in usage.text.headline + usage.text.basis
    assert (
        f"({usage.used_tokens:,} / {usage.context_window:,}, estimated until the next reply)"
        in (usage.text.headline)
    )


async def test_a_drafts_usage_says_in_words_the_figures_it_gives(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    """`baton/usage` with a draft adds the draft to the figures: its words say them too,
    not the figures before the draft."""
    sid = service.create("drafted").session_id
    fake_anthropic.reply("noted", usage={"input_tokens": 9_000, "output_tokens": 5})
    await service.replies.send(sid, "first " * 50)
    before = service.usage(sid)
    drafted = await service.draft_usage(sid, Draft(text="next " * 3_000))
    assert drafted.used_tokens > before.used_tokens + 2_500
    assert drafted.text == describe(drafted)
    assert f"({drafted.used_tokens:,} / " in drafted.text.headline
    assert " est." in drafted.text.panel  # the draft is an estimate
    assert drafted.basis == "api" and marks_estimate(drafted) == [True] * 4, drafted.text


def test_an_estimate_without_tiktoken_says_how_it_was_counted(
    store: SessionStore, settings: Settings, tmp_path: Path
) -> None:
    """Without the tokenizer the estimator counts characters / 4: the basis says that, not
    "tiktoken"."""
    fallback = Estimator(bpe_path=tmp_path / "absent.tiktoken")
    session = store.create(model="claude-sonnet-4-5")
    session.append([MessageInput(role="user", content="x" * 400)])
    usage = compute_usage(session, settings, fallback)
    assert not usage.estimator_exact
    assert "tiktoken" not in usage.text.basis
    assert usage.text.basis == "Estimated offline (characters / 4, calibrated)."


def marks_estimate(usage: Usage) -> list[bool]:
    """Whether each of the usage's words says its figure is an estimate."""
    return [
        usage.text.meter.startswith("~"),
        "estimated" in usage.text.headline,
        " est." in usage.text.panel,
        usage.text.basis.startswith("Estimated"),
    ]


async def test_a_session_no_reply_has_confirmed_says_estimated_in_every_word(
    service: BatonService,
) -> None:
    """Before the first reply the figure is estimates alone: the meter marks it as the
    headline, the panel and the basis do, as after a compaction."""
    sid = service.create("fresh").session_id
    service.append(sid, talk(1)[:1])
    usage = service.usage(sid)
    assert usage.basis == "estimate" and usage.estimated
    assert marks_estimate(usage) == [True] * 4, usage.text
    assert usage.text.meter.startswith(f"~{usage.percent_used:.0f}% ")
    assert f"({usage.used_tokens:,} / {usage.context_window:,}, estimated" in usage.text.headline


async def test_a_draft_over_an_exact_count_says_estimated_not_exact(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The API's exact count of the view plus the draft's estimate is an estimate: no word
    of it says "Exact"; the usage without the draft still does."""
    fake_anthropic.count_tokens_result = 4_321
    service = service_on(tmp_path / "data", estimator, exactCounts=True)
    try:
        sid = service.create("exact").session_id
        service.append(sid, talk(1))
        assert await service.changes.count_exactly(sid)
        exact = service.usage(sid)
        assert exact.basis == "exact" and marks_estimate(exact) == [False] * 4, exact.text
        drafted = await service.draft_usage(sid, Draft(text="next " * 300))
        assert drafted.estimated and drafted.used_tokens > 4_321
        assert marks_estimate(drafted) == [True] * 4, drafted.text
        assert "Exact" not in drafted.text.basis
    finally:
        await service.close()
