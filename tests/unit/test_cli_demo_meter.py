"""`baton demo`'s meter line says what the server's meter says: the same share (past 100%
when the context is), and nothing about auto-compact that the server does not say."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.cli.demo import meter
from baton.core.conversation.messages import ApiUsage, MessageInput
from baton.core.usage.estimator import Estimator
from baton_testkit.services import service_on


async def usage_of(data: Path, estimator: Estimator, input_tokens: int, auto: bool) -> dict:
    """The wire usage of a session with `input_tokens` in real use, on a 200K window."""
    service = service_on(data, estimator, autoCompact={"enabled": auto})
    try:
        session = service.create("big", model="claude-sonnet-4-5")
        usage = ApiUsage(input_tokens=input_tokens, output_tokens=20)
        reply = MessageInput(role="assistant", content="done", api_message_id="a1", usage=usage)
        service.append(session.session_id, [MessageInput(role="user", content="hi"), reply])
        return service.usage(session.session_id).wire()
    finally:
        await service.close()


@pytest.mark.usefixtures("fake_anthropic")
async def test_a_context_past_the_window_is_said_as_the_meter_says_it(
    tmp_path: Path, estimator: Estimator
) -> None:
    """The demo said "100.0% used" (`percentUsed` stops at 100) where the meter said 150%."""
    usage = await usage_of(tmp_path / "data", estimator, 300_000, auto=True)
    assert usage["percentUsed"] == 100.0 and usage["text"]["meter"].startswith("150% ")
    line = meter(usage)
    assert usage["text"]["headline"] in line and "150%" in line and "100.0%" not in line


@pytest.mark.usefixtures("fake_anthropic")
async def test_with_auto_compact_off_it_is_not_said_to_be_coming(
    tmp_path: Path, estimator: Estimator
) -> None:
    usage = await usage_of(tmp_path / "data", estimator, 50_000, auto=False)
    line = meter(usage)
    assert "auto-compact off" in line and "until auto-compact" not in line


def test_the_demo_on_an_output_without_block_characters_draws_its_meter_in_ascii() -> None:
    """On a Latin-1 or ASCII output the demo's meter bar was the escapes of its block
    characters ("[\\u2588\\u2588\\u2588\\u258b ... ]"), as `baton usage`'s chart was."""
    import io

    from baton.cli.demo import Narrator

    latin = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    assert Narrator(latin).ascii_only and not Narrator(io.StringIO()).ascii_only
    usage = {"usedTokens": 50_000, "contextWindow": 200_000, "state": "ok"}
    usage["text"] = {"headline": "Context 25% used"}
    assert meter(usage, ascii_only=True) == f"[{'#' * 8:<30}] Context 25% used - state ok"
