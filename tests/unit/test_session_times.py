"""A session's `updated_at` is the latest time its records name, each time read once: an
unreadable one never stands over a readable one, and none moves it back."""

from __future__ import annotations

import random

import pytest

from baton.core.conversation.session_fields import SessionFields, instant

STAMPS = [
    "2026-03-02T09:00:00.000Z",
    "2026-03-02T09:00:00Z",
    "2026-03-02T10:00:00+01:00",  # the same moment as the two above
    "2026-03-02T09:00:01.500Z",
    "2026-03-02T09:00:01.5",  # naive: taken as UTC
    "2026-03-01T23:59:59Z",
    "2026-03-03T00:00:00Z",
    "yesterday",
    "",
]


def latest(first: str, stamps: list[str]) -> str:
    """Each record's time compared with the one kept, both read afresh each time."""
    kept = first
    for stamp in stamps:
        before, after = instant(kept), instant(stamp)
        if before is None or (after is not None and after > before):
            kept = stamp
    return kept


@pytest.mark.parametrize("seed", range(60))
def test_the_time_kept_is_the_latest_any_record_names(seed: int) -> None:
    rng = random.Random(seed)
    first = rng.choice(STAMPS[:-1])
    stamps = [rng.choice(STAMPS[:-1]) for _ in range(rng.randint(0, 12))]
    fields = SessionFields()
    fields._reset_fields()
    fields.created_at = fields.updated_at = first
    for stamp in stamps:
        fields._saw_time(stamp)
    assert fields.updated_at == latest(first, stamps)
