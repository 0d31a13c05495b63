"""Whether a usage calls for auto-compact: a check looks at it (auto-compact on, not
paused), compacts when due (at its threshold, or its request over the API's bytes), and
why a request is refused for its size, in words."""

from __future__ import annotations

from baton.core.usage.budget import Usage


def checks(usage: Usage) -> bool:
    """Whether a check looks at the session `usage` measures (auto-compact on and not
    paused): it clears old tool results first (microcompact), then compacts when
    `compaction_due` (before a send, the send does both first; `baton payload` too)."""
    return usage.auto_compact_enabled and not usage.auto_compact_paused


def compaction_due(usage: Usage) -> bool:
    """Whether a check compacts the view `usage` measures: `checks`, and the view at or
    past its threshold, or its request over the API's bytes (its images and documents,
    whatever its tokens: the API would refuse it)."""
    return checks(usage) and (usage.used_tokens >= usage.auto_compact_threshold or over(usage))


def over(usage: Usage) -> bool:
    """Whether the request of the view `usage` measures is over the API's 32 MB."""
    return usage.request_size is not None and usage.request_size.over


def refused(usage: Usage) -> str | None:
    """Why the request of the view `usage` measures is refused for its size, in words; None
    when it is not over the API's bytes."""
    size = usage.request_size
    if size is None or not size.over:
        return None
    return f"its request is {size.request_bytes:,} bytes, over the API's 32 MB whatever its tokens"
