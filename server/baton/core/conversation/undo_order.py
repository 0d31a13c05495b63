"""Undos that must come before an undo of a compaction: the rewind that undoing it would
give turns to put back after ones it kept (`kept_later`), and the compaction whose summary
holds a summary of it that a rewind kept (`held_since`). The undo is refused, naming that
boundary, while it stands (`undo_check.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from baton.core.conversation.boundary import Boundary, expand
from baton.core.conversation.undo import (
    Placed,
    placing,
    rewound_out,
    stands_for_of,
    undo_mapping,
)
from baton.core.conversation.undo_place import put_back
from baton.core.conversation.undo_summarized import reached


def kept_later(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    order: Mapping[str, int],
    every: Iterable[Boundary] = (),
    after: list[str] | None = None,
    placed: Placed | None = None,
) -> str | None:
    """The rewind in force that undoing compaction `boundary` would give the rest of a
    span cut before a message it took, while it keeps turns that came after that rest (in
    another summary, the message pinned beside both): its undo puts what it holds after
    what it kept, so that rest would come back after them. None when no rewind would.
    `after`: the view the undo gives (`uncompacted`'s), and `placed` what it places
    (`placing`'s), when worked out already."""
    summarized, held, spans, tails, _, _ = placed or placing(view, boundary, others, order, every)
    stands_for = stands_for_of(others)
    if after is None:
        after = put_back(view, spans, held, summarized)
    reach = reached(after, stands_for)
    rewound = rewound_out(view, others)
    for rewind in others:
        given = [one for mid in rewind.summarized_ids for one in tails.get(mid, [])]
        if rewind.direction != "rewind" or not given:
            continue
        kept = reached(expand(rewind.view_after, spans), stands_for) & reach
        plain = [order[one] for one in kept - rewound if one in order and one not in stands_for]
        if max(plain, default=-1) > min(order.get(one, len(order)) for one in given):
            return rewind.id
    return None


def held_since(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    since: Callable[[str], Callable[[str], bool]],
) -> str | None:
    """The compaction in force whose summary in the view holds a summary of compaction
    `boundary` that a rewind kept, where the rewind took a message of its span (pinned
    beside it), and that stands for no turn sent since the rewind (`since`: whether a
    message came after a given boundary; with such a turn, the rewind's undo is refused
    while it stands). Its text covers the whole span: cut before the rewound message, the
    rest would come back, on the rewind's undo, beside the summary that quotes it; left
    whole inside it, the span would hold turns the rewind holds too. Undoing that
    compaction first puts the summary back in the view. None when no compaction holds one
    so."""
    stands_for = stands_for_of(others)
    present = set(view)
    holder = {one: mid for mid, span in stands_for.items() for one in span}
    for mid, span in undo_mapping(boundary).items():
        if mid in present or mid not in holder:
            continue
        for rewind in others:
            if rewind.direction != "rewind" or set(rewind.summarized_ids).isdisjoint(span):
                continue
            kept = reached(rewind.view_after, stands_for)
            if mid not in kept or holder[mid] in kept:
                continue
            top = next((one for one in view if mid in reached([one], stands_for)), None)
            later = since(rewind.id)
            turns = reached([top], stands_for) if top is not None else set()
            if not any(later(one) for one in turns if one not in stands_for):
                return next((b.id for b in others if top in b.stands_for), None)
    return None
