"""The estimator's calibration is shared by every session: when a reply in one session moves
it, every other open session whose figure moved with it is told (a usage-only change, as
the wire's `usageChanged`), so a meter never stays on a figure `baton/usage` no longer
answers; a figure that stands is not told again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import ApiUsage, MessageInput, TextBlock
from baton.core.errors import PromptTooLong
from baton.core.service.events import Event, SessionChanged
from baton.core.service.service import BatonService
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.services import service_on


@pytest.fixture
def service(tmp_path: Path, estimator: Estimator) -> Iterator[BatonService]:
    baton = service_on(tmp_path / "data", estimator)
    yield baton
    baton.store.close()


def talk(turns: int, words: int = 120) -> list[MessageInput]:
    """Turns with no real usage: their figure is all estimate."""
    said = []
    for n in range(turns):
        said.append(MessageInput(role="user", content=f"question {n}: " + "lorem ipsum " * words))
        said.append(MessageInput(role="assistant", content=f"answer {n}: " + "dolor sit " * words))
    return said


def told(heard: list[Event], session_id: str) -> list[SessionChanged]:
    """The usage-only changes the session was told."""
    return [
        e
        for e in heard
        if isinstance(e, SessionChanged) and e.session_id == session_id and e.reason is None
    ]


async def test_a_reply_in_another_session_tells_a_compacted_session_its_new_figure(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    compacted = service.create("compacted").session_id
    fake_anthropic.reply("noted", usage={"input_tokens": 6_000, "output_tokens": 5})
    service.append(compacted, talk(8))
    await service.replies.send(compacted, "and now?")
    await service.compaction.compact(compacted, CompactRequest(direction="all"))
    estimated = service.create("estimated").session_id
    service.append(estimated, talk(3))
    followed = service.create("followed").session_id  # a reply, then a prompt after it
    fake_anthropic.reply("noted", usage={"input_tokens": 2_000, "output_tokens": 5})
    await service.replies.send(followed, "question " * 100)
    service.append(followed, talk(2))
    figures = (compacted, estimated, followed)
    before = {sid: service.usage(sid).used_tokens for sid in figures}
    heard: list[Event] = []
    service.connect(heard.append)

    teacher = service.create("teacher").session_id
    service.append(teacher, talk(4))
    estimate = service.usage(teacher).used_tokens
    fake_anthropic.reply("ok", usage={"input_tokens": int(estimate * 1.3), "output_tokens": 5})
    await service.replies.send(teacher, "hi")

    for sid in figures:
        now = service.usage(sid).used_tokens
        assert now != before[sid]  # the factor moved the estimate
        (moved,) = told(heard, sid)  # told once, as a usage-only change
        assert moved.usage.used_tokens == now


async def test_a_figure_the_new_factor_leaves_as_it_was_is_not_told_again(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    """A session anchored on its own reply, nothing after it: the factor does not reach it."""
    anchored = service.create("anchored").session_id
    fake_anthropic.reply("done", usage={"input_tokens": 3_000, "output_tokens": 5})
    await service.replies.send(anchored, "question " * 100)
    heard: list[Event] = []
    service.connect(heard.append)

    teacher = service.create("teacher").session_id
    service.append(teacher, talk(4))
    estimate = service.usage(teacher).used_tokens
    fake_anthropic.reply("ok", usage={"input_tokens": int(estimate * 1.3), "output_tokens": 5})
    await service.replies.send(teacher, "hi")

    assert told(heard, anchored) == []
    assert told(heard, teacher) == []  # its own change told it already
    assert [e.reason for e in heard if isinstance(e, SessionChanged)][-1] == "reply"


def test_an_appended_reply_with_real_usage_tells_the_others(service: BatonService) -> None:
    """A client that talks to the model itself teaches the estimator through `append`."""
    estimated = service.create("estimated").session_id
    service.append(estimated, talk(3))
    heard: list[Event] = []
    service.connect(heard.append)

    measured = service.create("measured").session_id
    service.append(measured, talk(3))
    real = ApiUsage(input_tokens=2 * service.usage(measured).used_tokens, output_tokens=7)
    reply = MessageInput(
        role="assistant", content=[TextBlock(text="here")], api_message_id="msg_1", usage=real
    )
    service.append(measured, [reply])

    (moved,) = told(heard, estimated)
    assert moved.usage.used_tokens == service.usage(estimated).used_tokens


async def test_a_prompt_too_long_error_tells_every_session_the_figure_it_taught(
    service: BatonService, fake_anthropic: FakeAnthropic
) -> None:
    """The error states the prompt's real size: the refused session's own figure moves too."""
    estimated = service.create("estimated").session_id
    service.append(estimated, talk(3))
    refused = service.create("refused").session_id
    service.append(refused, talk(4))
    heard: list[Event] = []
    service.connect(heard.append)

    fake_anthropic.prompt_too_long(2 * service.usage(refused).used_tokens, 200_000)
    with pytest.raises(PromptTooLong):
        await service.replies.send(refused, "hi")

    for sid in (estimated, refused):
        moved = told(heard, sid)
        assert moved and moved[-1].usage.used_tokens == service.usage(sid).used_tokens


def test_a_factor_that_does_not_move_tells_nobody(service: BatonService) -> None:
    estimated = service.create("estimated").session_id
    service.append(estimated, talk(3))
    heard: list[Event] = []
    service.connect(heard.append)

    other = service.create("other").session_id
    service.append(other, talk(3))  # no real usage: nothing learned

    assert told(heard, estimated) == []
