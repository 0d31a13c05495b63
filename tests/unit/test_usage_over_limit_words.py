"""What the words say a send over the limit (or past the auto-compact point) will do, after
a switch to a model with a smaller window: the same in the switch's warning, the usage's
headline (the meter's diagnostic) and the draft's verdict. While auto-compact can run, the
send compacts first; while it is off or paused, the user compacts first."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.core.conversation.messages import ApiUsage, MessageInput
from baton.core.conversation.meta_records import AutoPause
from baton.core.service.service import BatonService
from baton.core.usage.draft import Draft
from baton.core.usage.estimator import Estimator
from baton_testkit.services import service_on

ON, OFF, PAUSED = "on", "off", "paused"


async def switched(
    data: Path, estimator: Estimator, auto: str, input_tokens: int
) -> tuple[BatonService, str, str | None]:
    """A session with `input_tokens` in real use on a 1M window, switched to a 200K one,
    on a service whose auto-compact is `auto`."""
    enabled = {"autoCompact": {"enabled": auto != OFF}}
    service = service_on(data, estimator, **enabled)
    session = service.create("big", model="claude-sonnet-4-5[1m]")
    usage = ApiUsage(input_tokens=input_tokens, output_tokens=20)
    reply = MessageInput(role="assistant", content="done", api_message_id="api_1", usage=usage)
    service.append(session.session_id, [MessageInput(role="user", content="read all"), reply])
    if auto == PAUSED:  # a pause the transcript keeps, as a restarted server finds it
        session.keep_auto_pause(AutoPause("thrashing", "the context refilled"))
        await service.close()
        service = service_on(data, estimator, **enabled)
    _, _, warning = service.set_model(session.session_id, "claude-sonnet-4-5")
    return service, session.session_id, warning


@pytest.mark.usefixtures("fake_anthropic")
@pytest.mark.parametrize(
    ("auto", "verdict", "said"),
    [
        (ON, "autoCompact", "the next send compacts first"),
        (OFF, "compactFirst", "compact before the next send"),
        (PAUSED, "compactFirst", "compact before the next send"),
    ],
)
async def test_over_the_new_limit_every_word_says_what_the_send_will_do(
    tmp_path: Path, estimator: Estimator, auto: str, verdict: str, said: str
) -> None:
    service, sid, warning = await switched(tmp_path / "data", estimator, auto, 300_000)
    try:
        usage = service.usage(sid)
        assert usage.state == "blocking" and usage.context_window == 200_000
        assert warning is not None and warning.endswith(f": {said}."), warning
        assert f"blocked at {usage.blocking_limit:,}: {said}" in usage.text.headline
        drafted = await service.draft_usage(sid, Draft(text="next"))
        assert drafted.draft is not None and drafted.draft.verdict == verdict
        if auto == PAUSED:  # the pause in the meter's words, one clause of the sentence
            assert drafted.draft.message is not None
            assert drafted.draft.message.endswith(
                ", and auto-compact is stopped: the working set does not fit; compact the "
                "conversation first."
            ), drafted.draft.message
    finally:
        await service.close()


@pytest.mark.usefixtures("fake_anthropic")
async def test_past_the_new_auto_compact_point_while_paused_no_send_is_said_to_compact(
    tmp_path: Path, estimator: Estimator
) -> None:
    """Under the limit but past the auto-compact point, a paused auto-compact does not run
    on the next send: the switch says nothing of a compaction, as the draft's verdict."""
    service, sid, warning = await switched(tmp_path / "data", estimator, PAUSED, 170_000)
    try:
        usage = service.usage(sid)
        assert usage.auto_compact_threshold <= usage.used_tokens < usage.blocking_limit
        assert warning is None
        drafted = await service.draft_usage(sid, Draft(text="next"))
        assert drafted.draft is not None and drafted.draft.verdict == "fits"
    finally:
        await service.close()


@pytest.mark.usefixtures("fake_anthropic")
async def test_the_diagnostic_told_of_a_pause_its_usage_does_not_say_yet_says_so_over_the_limit(
    tmp_path: Path, estimator: Estimator
) -> None:
    """The usage diagnostic worded for a pause given beside the usage (`paused_by`): over the
    limit, the paused auto-compact does not make room, so the send does not compact first."""
    from baton.lsp.session_document.diagnostics import usage_message

    service, sid, _ = await switched(tmp_path / "data", estimator, ON, 300_000)
    try:
        usage = service.usage(sid)
        assert usage.state == "blocking" and not usage.auto_compact_paused
        for by in ("thrashing", "failures"):
            message = usage_message(usage, by)
            assert message.endswith("blocked at 177,000: compact before the next send"), message
    finally:
        await service.close()


@pytest.mark.usefixtures("fake_anthropic")
async def test_when_the_system_prompt_and_tools_alone_reach_the_limit_no_word_promises_a_compaction(
    tmp_path: Path, estimator: Estimator
) -> None:
    """A client's own system prompt over the limit: no compaction makes room (the draft's
    verdict is tooLarge), so the headline says so instead of a compaction first."""
    from baton.core.usage.overhead import ClientContext

    service = service_on(tmp_path / "data", estimator)
    try:
        own = ClientContext(system_tokens=190_000)
        sid = service.create("own", model="claude-sonnet-4-5", client_context=own).session_id
        service.append(sid, [MessageInput(role="user", content="hello")])
        usage = service.usage(sid)
        assert usage.state == "blocking" and usage.breakdown.system >= usage.blocking_limit
        drafted = await service.draft_usage(sid, Draft(text="next"))
        assert drafted.draft is not None and drafted.draft.verdict == "tooLarge"
        assert usage.text.headline.endswith(
            "blocked at 177,000: the system prompt and tools alone reach it"
        ), usage.text.headline
    finally:
        await service.close()
