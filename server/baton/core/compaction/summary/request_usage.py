"""The summary request's usage as the API reported it: a tally a compaction opens around
its summarizer, which every model request the summarizer makes adds its response's usage
to (a reminder or a shorter retry is a second request, and billed as one); and how much of
the span the answered request left out, to be told."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from baton.core.conversation.messages import ApiUsage


class UsageTally:
    """The usage of every response the summary took, added up (None: no model was asked)."""

    def __init__(self) -> None:
        self.total: ApiUsage | None = None
        self.left_out = 0  # the span's messages the answered request did not hold
        self.clipped = 0  # and those it held clipped

    def add(self, usage: ApiUsage) -> None:
        if not usage.is_real:
            return
        before = self.total or ApiUsage()
        self.total = ApiUsage(
            input_tokens=before.input_tokens + usage.input_tokens,
            output_tokens=before.output_tokens + usage.output_tokens,
            cache_creation_input_tokens=before.cache_creation_input_tokens
            + usage.cache_creation_input_tokens,
            cache_read_input_tokens=before.cache_read_input_tokens + usage.cache_read_input_tokens,
        )


_tally: ContextVar[UsageTally | None] = ContextVar("summary_usage", default=None)


@contextmanager
def summary_usage() -> Iterator[UsageTally]:
    """Within this block, the summary requests' usage is added to the tally it yields."""
    tally = UsageTally()
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


def record(usage: ApiUsage) -> None:
    """A summary request's response came back with `usage` (outside a tally: nothing)."""
    tally = _tally.get()
    if tally is not None:
        tally.add(usage)


def record_shortened(left_out: int, clipped: int) -> None:
    """The answered summary request held the span less `left_out` messages and with
    `clipped` of them clipped (outside a tally: nothing)."""
    tally = _tally.get()
    if tally is not None:
        tally.left_out, tally.clipped = left_out, clipped
