"""The meter knows a request's bytes, not only its tokens: a conversation holding 33 MB of
screenshots is a few thousand tokens, and the API refuses its every request (32 MB on a
whole request). The usage says so (its state, its headline, a warning with the way out)
once the request is near that limit, and the figure is the one a send measures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_request_bytes import SHOT, _shot

from baton.cli.main import main
from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import PromptTooLong
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import Settings
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.budget import budget_for
from baton.core.usage.draft import Draft, with_draft
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]


def _screenshots(store: SessionStore, count: int) -> Session:
    session = store.create("screenshots", "claude-haiku-4-5", "You are careful.")
    for n in range(count):
        session.append([_shot(n), MessageInput(role="assistant", content=f"seen {n}")])
    return session


def test_seven_screenshots_read_as_refused_on_the_meter_however_few_their_tokens(
    store: SessionStore, estimator: Estimator
) -> None:
    usage = compute_usage(_screenshots(store, 7), Settings(), estimator)

    assert usage.used_tokens < usage.warning_threshold  # the tokens alone say it fits
    assert usage.state == "blocking"
    size = usage.request_size
    assert size is not None and size.request_bytes > MAX_REQUEST_BYTES == size.limit
    assert (size.images, size.documents, size.media_bytes) == (7, 0, len(SHOT) * 7)
    assert usage.text.meter.endswith("K/200K · over 32 MB")
    assert usage.text.panel.endswith(" · over 32 MB")
    headline = usage.text.headline
    assert f"request is about {size.request_bytes:,} bytes, over the API's 32 MB" in headline
    assert "(7 images): the next send compacts the span holding them first" in headline
    [warning] = usage.warnings
    assert f"over the API's limit of {MAX_REQUEST_BYTES:,} (32 MB)" in warning
    assert f"the 7 images it holds are {len(SHOT) * 7:,} bytes of base64" in warning
    assert "Compact the span of the conversation holding them" in warning


def test_with_auto_compact_off_the_meter_says_to_compact_before_the_next_send(
    store: SessionStore, estimator: Estimator
) -> None:
    settings = Settings.model_validate({"autoCompact": {"enabled": False}})
    usage = compute_usage(_screenshots(store, 7), settings, estimator)

    assert usage.state == "blocking"
    assert "compact the span holding them before the next send" in usage.text.headline


def test_six_screenshots_are_near_the_limit_and_the_meter_says_how_near(
    store: SessionStore, estimator: Estimator
) -> None:
    usage = compute_usage(_screenshots(store, 6), Settings(), estimator)

    size = usage.request_size
    assert size is not None and MAX_REQUEST_BYTES * 3 // 4 < size.request_bytes < MAX_REQUEST_BYTES
    share = round(100 * size.request_bytes / MAX_REQUEST_BYTES)
    assert usage.state == "warning"
    mb = f"{size.request_bytes * 10 // 2**20 / 10:.1f}/32 MB"  # 28,800,333 bytes: 27.4
    assert usage.text.meter.endswith(f"K/200K · {mb}") and usage.text.panel.endswith(mb)
    assert usage.text.headline.endswith(f"; the request is {share}% of the API's 32 MB (6 images)")
    [warning] = usage.warnings
    assert f"{share}% of the API's limit of {MAX_REQUEST_BYTES:,}" in warning
    assert "a request over the limit is refused" in warning


@pytest.mark.parametrize("count", [3, 4])
def test_screenshots_far_from_the_limit_leave_the_meter_as_it_was(
    store: SessionStore, estimator: Estimator, count: int
) -> None:
    usage = compute_usage(_screenshots(store, count), Settings(), estimator)

    assert usage.state == "ok" and usage.warnings == []
    assert "request" not in usage.text.headline and "MB" not in usage.text.meter
    # under half the limit the request is not measured; over it, measured and not said
    assert (usage.request_size is None) == (len(SHOT) * count <= MAX_REQUEST_BYTES // 2)


@pytest.mark.parametrize(("auto", "verdict"), [(True, "autoCompact"), (False, "compactFirst")])
def test_a_draft_says_its_request_is_over_the_apis_bytes_not_that_it_fits(
    store: SessionStore, estimator: Estimator, auto: bool, verdict: str
) -> None:
    """Six screenshots are near; a seventh attached to the draft takes its request over."""
    settings = Settings.model_validate({"autoCompact": {"enabled": auto}})
    session = _screenshots(store, 6)
    usage = compute_usage(session, settings, estimator)
    budget, _ = budget_for(session.model, settings)
    draft = Draft.model_validate({"text": "and this one?", "attachments": _shot(7).content[:1]})

    drafted = with_draft(usage, draft, estimator, budget)

    assert drafted.draft is not None and drafted.draft.verdict == verdict
    size = drafted.request_size
    assert size is not None and size.images == 7 and size.request_bytes > MAX_REQUEST_BYTES
    assert drafted.state == "blocking"
    message = drafted.draft.message or ""
    assert f"a request of about {size.request_bytes:,} bytes, over the API's 32 MB" in message
    assert "(7 images)" in message and "the span holding them first" in message
    # the text alone keeps it under: near, said so, and it fits
    alone = with_draft(usage, Draft(text="and now?"), estimator, budget)
    assert alone.draft is not None and alone.draft.verdict == "fits"
    assert alone.state == "warning"


async def test_the_meters_figure_is_the_one_the_send_refuses(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    session = _screenshots(store, 6)
    compute_usage(session, Settings(), estimator)  # measured: what follows is added to it
    session.append([_shot(6), MessageInput(role="assistant", content="seen 6")])
    session.append([MessageInput(role="user", content="and now?")])
    usage = compute_usage(session, Settings(), estimator)
    ctx = ChatContext(settings=Settings(), estimator=estimator, client=anthropic_client())
    with pytest.raises(PromptTooLong) as caught:
        await send(session, content=None, tools=None, ctx=ctx)

    assert usage.request_size is not None
    sent = caught.value.data["requestBytes"]
    assert abs(usage.request_size.request_bytes - sent) < 1024  # the turns as stored
    assert fake_anthropic.message_requests() == []


def test_baton_usage_says_the_request_is_over_the_apis_bytes(
    store: SessionStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = _screenshots(store, 7)
    path = next(tmp_path.glob(f"**/{session.session_id}.jsonl"))
    store.close()

    assert main(["usage", str(path)]) == 0
    out = capsys.readouterr().out
    (state,) = [line for line in out.splitlines() if line.startswith("State")]
    assert state.split()[1] == "blocking"
    (warning,) = [line for line in out.splitlines() if line.startswith("Warning")]
    assert "over the API's limit of 33,554,432 (32 MB) on a whole request" in warning
    assert "the 7 images it holds" in warning and "Compact the span" in warning


def test_baton_payload_says_the_next_send_compacts_first_for_the_requests_bytes(
    store: SessionStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = _screenshots(store, 7)
    path = next(tmp_path.glob(f"**/{session.session_id}.jsonl"))
    store.close()

    assert main(["payload", str(path)]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "auto-compacts first" in x]
    assert "is over the API's 32 MB" in line and "threshold" not in line
