"""A `Usage` of a session on claude-sonnet-4-5's 200K window, for tests of its words."""

from __future__ import annotations

from typing import Any

from baton.core.usage.budget import Breakdown, Usage


def sonnet_usage(
    used_tokens: int,
    *,
    percent_used: float,
    percent_left: float,
    breakdown: Breakdown,
    state: str = "ok",
    estimated: bool = True,
    **fields: Any,
) -> Usage:
    """The usage of `used_tokens` against the default thresholds of a 200K window."""
    return Usage(
        session_id="s_1",
        model="claude-sonnet-4-5",
        context_window=200_000,
        effective_window=180_000,
        auto_compact_threshold=167_000,
        warning_threshold=147_000,
        error_threshold=167_000,
        blocking_limit=177_000,
        used_tokens=used_tokens,
        percent_used=percent_used,
        percent_left=percent_left,
        state=state,
        estimated=estimated,
        auto_compact_enabled=True,
        auto_compact_paused=False,
        breakdown=breakdown,
        **fields,
    )
