"""The summary's bound is never past a quarter of the auto-compact threshold, below 20,000
tokens too: on a small window a long chat with tool calls keeps compacting on its own,
every summary leaving room to work in, and no send is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.core.compaction.represented import SUMMARY_MAX_TOKENS, summary_bound
from baton.core.errors import PromptTooLong
from baton.core.tools.host import DiskHost
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.request_size import SizeOfRequest, prose
from baton_testkit.services import service_on


@pytest.mark.parametrize(
    ("stands_for", "threshold", "bound"),
    [
        (0, 13_400, 3_350),  # a 20K window: a quarter of its threshold
        (10**6, 13_400, 3_350),
        (0, 134_000, SUMMARY_MAX_TOKENS),  # a 200K window: the floor
        (10**6, 134_000, 33_500),  # grown to 5%, capped at a quarter
        (10**6, 0, 50_000),  # no threshold known: grown to 5%
        (0, 0, SUMMARY_MAX_TOKENS),
    ],
)
def test_the_bound_grows_to_its_share_and_stays_under_a_quarter_of_the_threshold(
    stands_for: int, threshold: int, bound: int
) -> None:
    assert summary_bound(stands_for, threshold) == bound


async def test_a_long_chat_on_a_small_window_keeps_auto_compacting(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for i in range(4):
        body = "".join(f"def f{i}_{n}(x):\n    return x + {n}\n" for n in range(60))
        (workspace / f"mod{i}.py").write_text(body)
    fake_anthropic.prompt_cache = SizeOfRequest(estimator)  # type: ignore[assignment]
    service = service_on(tmp_path / "data", estimator, workspace, contextWindow=20_000)
    threshold = 13_400  # two thirds of the window
    sid = service.create("small", model="claude-haiku-4-5").session_id
    summaries: list[int] = []
    try:
        for n in range(22):
            name = f"mod{n % 4}.py"
            call = tool_use_block("read_file", {"path": name})
            fake_anthropic.reply(call, stop_reason="tool_use")
            fake_anthropic.reply(f"Answer {n}. " + prose(2_000 + n, 250))
            prompt = f"Q{n}: please look at {name} and explain. " + prose(1_000 + n, 200)
            if n < 3:  # prompts of the kind a summary carries in full
                prompt = f"Always keep rule {n} in mind. " + prose(3_000 + n, 40)
            try:
                await service.replies.send(sid, prompt, host=DiskHost(answer="allowOnce"))
            except PromptTooLong as refused:
                paused = service.usage(sid).auto_compact_paused_by
                raise AssertionError(
                    f"turn {n}: {refused}; {summaries}; paused: {paused}"
                ) from None
            view = service.session(sid).view_messages()
            summary = next((m for m in view if m.kind == "summary"), None)
            if summary is not None and (not summaries or summaries[-1] != summary.tokens):
                summaries.append(summary.tokens)
        assert len(summaries) >= 3  # compacted again and again, on its own
        # the bound holds the summary's text; its message carries a little more (framing,
        # the kept facts' lines): near a quarter, never growing round after round as it
        # did up to past 6,000 tokens, when a 20,000-token floor lifted the bound
        assert max(summaries) < threshold // 3, summaries
        assert service.usage(sid).auto_compact_paused_by is None
    finally:
        await service.close()
