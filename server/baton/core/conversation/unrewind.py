"""Undoing a rewind: where the turns it took out go back (after what it kept and what is
older than it, another rewind's turns put back, before the turns sent since), and the
boundary that must be undone first."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.undo import stands_for_of
from baton.core.conversation.undo_summarized import Summarized, first_came, merged, reached

SentSince = Callable[[str], bool]
"""Whether a message came after a given rewind (a turn sent since, or a summary made since)."""


def held_by_rewind(rewind: Boundary, view: list[str], others: list[Boundary]) -> str | None:
    """The rewind among `others` that holds, out of `view`, a message `rewind` kept (itself,
    or inside a summary it took out): undoing `rewind` first would put its turns back with
    nothing of what came before them to follow. None when none does."""
    stands_for = stands_for_of(others)
    missing = set(rewind.view_after) - reached(view, stands_for)
    if missing:
        for other in others:
            if other.direction == "rewind" and missing & reached(other.summarized_ids, stands_for):
                return other.id
    return None


def undo_first(
    view: list[str],
    rewind: Boundary,
    others: list[Boundary],
    since: SentSince,
    every: Iterable[Boundary],
) -> str | None:
    """Why rewind `rewind` cannot be undone yet, naming the boundary to undo first (what
    its undo "would" do), or None when it can: another rewind holds what it kept
    (`held_by_rewind`), one summary stands for what it kept and turns sent since
    (`rewind_return`), or a summary quotes turns it would put back (`quoted_by`)."""
    holder = held_by_rewind(rewind, view, others)
    if holder is not None:
        return (
            f"put the turns it took out where rewind {holder} took out what came before "
            "them; undo that rewind first"
        )
    _, mixed = rewind_return(view, rewind, stands_for_of(others), since)
    by = next((b.id for b in others if mixed in b.stands_for), None)
    if by is not None:
        return (
            f"put the turns it took out after turns sent since: compaction {by} summarized "
            "both; undo that compaction first"
        )
    quoting = quoted_by(view, rewind, others, every)
    if quoting is not None:
        return (
            f"put back turns that the summary of compaction {quoting} quotes; undo that "
            "compaction first"
        )
    return None


def quoted_by(
    view: list[str], rewind: Boundary, others: list[Boundary], every: Iterable[Boundary]
) -> str | None:
    """The compaction in force whose summary in `view` quotes a message `rewind` would put
    back (its text covers it, through the summaries it summarized, whether or not their
    compaction still stands): a summary the rewind kept, undone inside a later one made
    since, gives the rewind its turns, which the later summary's text still covers; put
    back beside it, the model would get them twice. None when no summary does."""
    back = set(rewind.summarized_ids).difference(view)
    stands_for = stands_for_of(others)
    summarized = Summarized([*every, *others], others, {})
    for top in view:
        if top in stands_for and not back.isdisjoint(summarized.covered(top)):
            return next(b.id for b in others if top in b.stands_for)
    return None


def sent_since(order: Iterable[str], known: int) -> SentSince:
    """Whether a message came after the first `known` of the session's messages (`order`,
    every message id in the order they came)."""
    position = {mid: n for n, mid in enumerate(order)}
    return lambda mid: position.get(mid, known) >= known


def unrewind(
    view: list[str],
    boundary: Boundary,
    stands_for: dict[str, list[str]],
    since: SentSince,
    arrival: Iterable[str],
) -> list[str]:
    """The view once rewind `boundary` is undone: the messages it took out back where
    `rewind_return` puts them. Among older turns another rewind's undo put back after what
    this one kept, they go where they came (`arrival`: every message id, in the order they
    came), so that the view keeps that order: a summary among them where the first message
    it brings came, not one shown verbatim before them that it stands for too (pinned beside
    it), a restored file after the entry before it (not where it was written, after them).
    Those older turns keep their order (a summary among them that covers turns from before
    and after others keeps its place after the first of those)."""
    present = set(view)
    back = [mid for mid in boundary.summarized_ids if mid not in present]
    kept = set(boundary.view_after)
    reach = _reaches(view, kept, stands_for, since)
    start = max((n + 1 for n, (has_kept, _, _) in enumerate(reach) if has_kept), default=0)
    at, _ = rewind_return(view, boundary, stands_for, since)
    if at <= start:
        return [*view[:at], *back, *view[at:]]
    order = {mid: n for n, mid in enumerate(arrival)}
    placed = reached(view[:start], stands_for)

    def came(mid: str) -> int | None:  # not where a message shown before them came (pinned)
        if _placeless(mid, stands_for):
            return None  # a restored file: after the entry before it
        own = [order[one] for one in reached([mid], stands_for) - placed if one in order]
        return min(own, default=first_came(mid, stands_for, order))

    return [*view[:start], *merged(view[start:at], back, came), *view[at:]]


def _placeless(mid: str, stands_for: dict[str, list[str]]) -> bool:
    """Whether `mid` is a restored file (an attachment, which stands for nothing), or a
    summary of such files only: it has no place of its own among the turns."""
    if mid not in stands_for:
        return False
    return all(stands_for.get(one) == [] for one in reached([mid], stands_for) - {mid})


def rewind_return(
    view: list[str], boundary: Boundary, stands_for: dict[str, list[str]], since: SentSince
) -> tuple[int, str | None]:
    """Where the messages rewind `boundary` took out go back into `view`: after the last
    entry that is, or stands for (a summary, through the active compactions' `stands_for`),
    a message the rewind kept, before the turns sent since (at the start when none is).

    Also, when a turn sent since comes before that place, the summary that puts the place
    after it: one that stands for turns sent since as well as older ones (a compaction
    summarized both), or one after such a turn that stands for older ones; no place then
    puts the rewound turns after the older ones and before the turns sent since (None when
    there is no such entry). A message from before the rewind that it neither kept nor
    took out (another rewind's turns, put back by its undo) comes before them too."""
    kept = set(boundary.view_after)
    at, mixed = 0, None
    reach = _reaches(view, kept, stands_for, since)
    for n, (has_kept, has_older, _) in enumerate(reach):
        if has_kept or has_older:
            at = n + 1
    first_later = next((n for n, (_, _, later) in enumerate(reach[:at]) if later), None)
    if first_later is not None:
        mixed = next(
            (
                mid
                for mid, (has_kept, has_older, _) in zip(
                    view[first_later:at], reach[first_later:at], strict=True
                )
                if mid in stands_for and (has_kept or has_older)
            ),
            view[first_later],
        )
    return at, mixed


def _reaches(
    view: list[str], kept: set[str], stands_for: dict[str, list[str]], since: SentSince
) -> list[tuple[bool, bool, bool]]:
    """`_reach` of each entry of `view`. A message an earlier entry is or stands for (a
    pinned one shown verbatim before a summary that also stands for it) keeps that place
    once the summaries are undone (`expand` places an id where it first comes), so the later
    summary is not placed by it; one shown verbatim after the summary goes back into the
    summary's place, and counts there. But a fresh copy of a restored file (an entry that
    stands for attachments only) is placed by the stale copies it replaced, whatever stands
    for them before it: they go back in its place, as the compaction laid it out."""
    out: list[tuple[bool, bool, bool]] = []
    before: set[str] = set()
    for mid in view:
        stale = stands_for.get(mid) or []
        fresh = bool(stale) and all(stands_for.get(one) == [] for one in stale)
        hidden = before.intersection(stale) if fresh else set()  # an attachment: for nothing
        before -= hidden
        out.append(_reach(mid, kept, stands_for, since, before))
        before |= hidden | reached([mid], stands_for)
    return out


def _reach(
    mid: str,
    kept: set[str],
    stands_for: dict[str, list[str]],
    since: SentSince,
    present: Collection[str] = (),
) -> tuple[bool, bool, bool]:
    """Whether view entry `mid` is or stands for a message the rewind kept, one older than
    the rewind that it did not take out (another rewind's turns, put back by its undo), and
    a turn sent after the rewind. What it stands for that an earlier entry places
    (`present`) does not count; an entry an earlier one stands for (shown verbatim beside
    that summary, as a pinned message is: the cleared copy of a tool result, whose
    original the summary places too) counts as itself, where it is, so that the rewound
    turns do not go between a call and its result."""
    has_kept = has_older = has_later = False
    stack, seen = [mid], set()
    while stack:
        one = stack.pop()
        if one in seen:
            continue
        seen.add(one)
        if one != mid and one in present:
            continue
        if one in stands_for and one not in kept and not (one == mid and mid in present):
            stack.extend(stands_for[one])  # an attachment stands for nothing
        elif one in kept:
            has_kept = True
        elif since(one):
            has_later = True
        else:
            has_older = True
    return has_kept, has_older, has_later
