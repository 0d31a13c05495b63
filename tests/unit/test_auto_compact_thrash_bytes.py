"""The thrash guard when what refilled was the request's bytes, not its tokens: seven
screenshots pasted in one prompt, three times within a turn of an auto-compaction that
summarized the last seven, stop auto-compact. Its words say what happened (the images
took the request past the API's 32 MB again; its tokens are far under the threshold) and
what happens now (the send is refused for its bytes), not that the context refilled past
the threshold and the request goes out."""

from __future__ import annotations

import pytest
from test_request_bytes import SHOT

from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.usage.budget import Usage
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton.lsp.session_document.diagnostics import thrashing_message

SETTINGS = Settings()  # a 200K window: auto-compact at 167,000 tokens


def seven_shots(turn: int) -> list[MessageInput]:
    """A prompt holding seven screenshots (33.6 MB of base64, some 14K tokens), its reply."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": SHOT}}
    prompt = [*([image] * 7), {"type": "text", "text": f"what changed in these, round {turn}?"}]
    return [
        MessageInput(role="user", content=prompt),
        MessageInput(role="assistant", content=f"The settings page, round {turn}."),
    ]


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("shots", "claude-haiku-4-5", "You are careful.")


async def stopped(session: Session, estimator: Estimator) -> tuple[list[str], Usage]:
    """The words of each attempt until the thrash guard stops auto-compact, and the usage."""
    said: list[str] = []

    def context() -> CompactContext:
        return CompactContext(SETTINGS, estimator, ExtractiveSummarizer(estimator.count_text))

    auto = AutoCompactor(context, on_outcome=lambda _sid, outcome: said.append(outcome.message))
    for turn in range(4):  # compacted, then three refills within a turn
        session.append(seven_shots(turn))
        await auto.check(session, reason="send")
    paused_by = auto.paused_by(session.session_id)
    assert paused_by == "thrashing", said
    usage = compute_usage(session, SETTINGS, estimator, auto_paused=True, paused_by=paused_by)
    return said, usage


async def test_the_attempt_it_stops_says_the_images_refilled_the_request_and_the_send_is_refused(
    session: Session, estimator: Estimator
) -> None:
    said, usage = await stopped(session, estimator)

    assert all(line.startswith("Auto-compacted: ") for line in said[:3]), said
    last = said[-1]
    assert usage.used_tokens < usage.auto_compact_threshold  # the tokens did not refill
    assert "past the auto-compact threshold" not in last, last
    assert "past the API's 32 MB" in last and "within 3 turns" in last, last
    size = usage.request_size
    assert size is not None and size.over
    assert f"the send is refused: its request is {size.request_bytes:,} bytes" in last, last
    assert "goes out" not in last, last
    assert last.endswith(" Auto-compact is stopped until a manual compaction."), last


async def test_its_warning_speaks_of_the_images_not_of_tokens_and_file_reads(
    session: Session, estimator: Estimator
) -> None:
    _, usage = await stopped(session, estimator)

    warning = thrashing_message(usage)
    assert f"past the API's 32 MB ({MAX_REQUEST_BYTES:,} bytes)" in warning, warning
    assert f"{usage.auto_compact_threshold:,} tokens" not in warning, warning
    assert "file read" not in warning and "context window" not in warning, warning
    assert "fewer images or documents" in warning, warning
    assert "Compact manually" in warning, warning
