"""The tokens a summarized span stands for (an earlier summary counts as every message it
replaced, through each boundary), and the summary's bound that follows from them.

A summary carries the facts of everything it stands for, round after round: its bound is
at least SUMMARY_MAX_TOKENS and grows to FACTS_SHARE of the tokens it stands for, so a
third round can still quote every prompt ever typed; never past a quarter of the
auto-compact threshold (below SUMMARY_MAX_TOKENS too, under an 80,000-token threshold), so the
summary leaves room to work in."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session

SUMMARY_MAX_TOKENS = 20_000
FACTS_SHARE = 0.05  # of the tokens summarized: what the summary may take at most
THRESHOLD_SHARE = 4  # the summary takes at most 1/4 of the auto-compact threshold


def stands_for_tokens(
    session: Session,
    summarized: Sequence[Message],
    count: Callable[[Message], int],
    enough: Callable[[int], bool] | None = None,
) -> int:
    """The tokens the messages stand for: their own, where a message a boundary introduced
    (a summary, a microcompacted copy) counts as what it replaced. With `enough`, the
    count stops at the first total it accepts."""
    replaced: dict[str, list[str]] = {}
    for boundary_id in session.active:
        replaced.update(session.boundaries[boundary_id].stands_for)
    total = 0
    seen: set[str] = set()
    stack = [m.id for m in reversed(summarized)]
    by_id = {m.id: m for m in summarized}
    while stack:
        message_id = stack.pop()
        if message_id in seen:
            continue
        seen.add(message_id)
        originals = replaced.get(message_id)
        if originals:
            stack.extend(originals)
            continue
        message = by_id.get(message_id) or session.messages.get(message_id)
        if message is not None and message.kind != "attachment":
            total += count(message)
            if enough is not None and enough(total):
                break
    return total


def summary_bound(stands_for: int, threshold: int) -> int:
    """The summary's bound for a span standing for `stands_for` tokens (see above)."""
    bound = max(SUMMARY_MAX_TOKENS, int(stands_for * FACTS_SHARE))
    if threshold > 0:  # the cap holds below SUMMARY_MAX_TOKENS too: a small window
        bound = min(bound, threshold // THRESHOLD_SHARE)
    return bound


def span_summary_bound(
    session: Session, summarized: Sequence[Message], count: Callable[[Message], int], threshold: int
) -> int:
    """`summary_bound` of what `summarized` stands for, counted only as far as the bound
    can still move: past the threshold's share more tokens change nothing, so the turns an
    imported session's summaries stand for (stored without counts) are not all counted."""
    if threshold <= 0:
        return summary_bound(stands_for_tokens(session, summarized, count), threshold)
    ceiling = threshold // THRESHOLD_SHARE

    def enough(total: int) -> bool:
        return int(total * FACTS_SHARE) > ceiling

    return summary_bound(stands_for_tokens(session, summarized, count, enough), threshold)
