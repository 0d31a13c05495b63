"""What one auto-compaction attempt did, in the sentence the panel shows for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from baton.core.compaction.dropped import Dropped
from baton.core.conversation.meta_records import PausedBy
from baton.core.usage.wording import paused_word

Outcome = Literal["compacted", "failed", "cancelled"]


@dataclass(frozen=True)
class AutoOutcome:
    """What one auto-compaction did, for the user: `compacted` (the context went from
    `tokens_before` to `tokens_after`), `failed` (nothing changed, or not enough) or
    `cancelled` (stopped before it committed, or another compaction or writer came first:
    nothing changed, and no failure is counted)."""

    outcome: Outcome
    tokens_before: int
    tokens_after: int
    message: str
    dropped: Dropped | None = None  # what the compaction summarized, cleared, left out


OutcomeListener = Callable[[str, AutoOutcome], None]
# session id, what started it (told()'s `reason`), the id its boundary takes if it commits
StartListener = Callable[[str, str, str], None]


def told(
    outcome: Outcome,
    figures: tuple[int, int, int],
    detail: str,
    reason: str,
    paused: PausedBy | None,
    dropped: Dropped | None = None,
    over_bytes: str | None = None,
) -> AutoOutcome:
    """The attempt in one sentence; `figures` are the tokens before and after it and the
    blocking limit, `reason` what started it (a send is refused over the limit; `idle`: an
    idle compaction), `paused` why auto-compact now stops (the breaker opened, or the thrash
    guard), None while it goes on; `over_bytes` why its request is refused for its size
    whatever its tokens (the API's 32 MB), when it still is."""
    before, after, limit = figures
    if outcome == "compacted":
        went = f" {dropped.text}." if dropped is not None and dropped.text else ""
        what = "Compacted while idle" if reason == "idle" else "Auto-compacted"
        # the figure after it is an estimate until the next reply, as the meter marks it
        message = f"{what}: {before:,} -> {after:,} tokens (estimated).{went}"
        return AutoOutcome(outcome, before, after, message, dropped)
    what = "Compaction while idle" if reason == "idle" else "Auto-compact"
    if outcome == "cancelled":
        return AutoOutcome(outcome, before, before, f"{what} cancelled: nothing changed.")
    if over_bytes is not None:
        goes_on = f"the send is refused: {over_bytes}" if reason == "send" else over_bytes
    elif reason != "send":
        goes_on = f"{after:,} tokens are still in use"
    elif after >= limit:
        goes_on = f"the send is refused: {after:,} tokens are over the limit of {limit:,}"
    else:
        goes_on = f"the request goes out with {after:,} tokens in context"
    # in the meter's word for the pause: the thrash guard stops it, the breaker pauses it
    pause = f" Auto-compact is {paused_word(paused)} until a manual compaction." if paused else ""
    return AutoOutcome(outcome, before, after, f"{what} failed ({detail}): {goes_on}.{pause}")
