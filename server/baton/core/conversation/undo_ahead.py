"""What undoing a compaction leaves for the undos still ahead: the summaries in force that
hold its summary, whose own undos, once it is undone, would give a view that breaks the
API's rules."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message
from baton.core.conversation.summary_text import Texts, shared_texts
from baton.core.conversation.undo import stands_for_of, undo_compaction, undo_mapping
from baton.core.conversation.undo_summarized import reached


class Stopped(Exception):
    """The check was stopped at a step, its undo cancelled: nothing was written."""


@dataclass
class Watched:
    """A long check as its undo's request watches it: `stop`, set when the request is
    cancelled, ends it at its next step (`Stopped`); `told(words, share done or None)`
    hears each step."""

    stop: threading.Event = field(default_factory=threading.Event)
    told: Callable[[str, float | None], None] | None = None

    def step(self, words: str, done: float | None = None) -> None:
        if self.stop.is_set():
            raise Stopped("the undo's check was stopped; nothing was written")
        if self.told is not None:
            self.told(words, done)


def broken_ahead(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    order: Mapping[str, int],
    every: Iterable[Boundary],
    messages: Mapping[str, Message],
    watched: Watched | None = None,
) -> str | None:
    """The compaction in force holding the summary of compaction `boundary` (inside
    another summary, or pinned beside it) whose undo, once `boundary` is undone, would give
    a view that breaks the API's rules, where it gives a valid one now. A message pinned
    beside the undone summary, then unpinned and summarized by another summary, stays
    inside that one: the span, without the session's first prompt, would open the view
    with a reply. Undoing that compaction first keeps the span whole. None when none
    would. Each undo it works out walks the whole view (a long chain: one per summary
    that holds `boundary`, twice): `watched` hears each, and may stop the check. A view
    the same as the undo without `boundary` undone gave is not checked against the rules
    again (a chain's are, but the last)."""
    every = list(every)
    mine = set(undo_mapping(boundary))
    walked = [o.model_copy() for o in others]
    watched = watched or Watched()
    texts = shared_texts(every)  # what each text covers, read once for all of them
    steps, _, changes = _holders(view, mine, walked, order, every, watched, texts)
    if not steps:
        return None
    broke: list[bool] | None = None  # whether each of those undos breaks them, as they go
    copies = [other.model_copy() for other in others]  # the undos update them
    after = undo_compaction(view, boundary, copies, order, every, texts=texts)
    same = after == view  # the view as each undo without it gives it (a chain: all but the last)
    for n, holder in enumerate(steps):
        watched.step(
            f"Checking their undos once it is undone: {n:,} of {len(steps):,}", n / len(steps)
        )
        one = next(copy for copy in copies if copy.id == holder)
        copies.remove(one)
        before, after = after, undo_compaction(after, one, copies, order, every, texts=texts)
        same = same and changes[n] is not None and _change(before, after) == changes[n]
        if not same and _breaks(after, messages):
            if broke is None:  # worked out only for a view that breaks (seldom): again
                walked = [o.model_copy() for o in others]
                quiet = Watched(watched.stop)
                _, broke, _ = _holders(view, mine, walked, order, every, quiet, texts, messages)
            if not broke[n]:
                return holder
    return None


def _holders(
    view: list[str],
    mine: set[str],
    boundaries: list[Boundary],
    order: Mapping[str, int],
    every: list[Boundary],
    watched: Watched,
    texts: Texts | None,
    messages: Mapping[str, Message] | None = None,
) -> tuple[list[str], list[bool], list[Change | None]]:
    """The compactions to undo, outermost first, until no summary in the view stands for
    one of the summaries `mine` (one pinned beside another stays in the view), given the
    `messages`, whether each undo breaks the API's rules, and how each changes the view
    (`_change`; `boundaries` are updated)."""
    steps: list[str] = []
    broke: list[bool] = []
    changes: list[Change | None] = []
    while True:
        stands_for = stands_for_of(boundaries)
        top = next((mid for mid in view if _holds(mid, mine, stands_for)), None)
        holder = next((b for b in boundaries if top is not None and top in b.stands_for), None)
        if holder is None:
            break
        watched.step(f"Undoing the compactions that hold it, on a copy: {len(steps):,}")
        boundaries.remove(holder)
        before, view = view, undo_compaction(view, holder, boundaries, order, every, texts=texts)
        steps.append(holder.id)
        changes.append(_change(before, view))
        if messages is not None:
            broke.append(_breaks(view, messages))
    return steps, broke, changes


Change = tuple[int, tuple[str, ...], int]
"""A view's change: (entries kept at its start, those that came in, entries kept at its end)."""


def _change(before: list[str], after: list[str]) -> Change | None:
    """How `after` differs from `before`: one entry of it (an undone summary, most often)
    replaced by others, the rest as it was; None when it differs otherwise. Two views that
    were the same and change the same way are still the same, so the second need not be
    checked against the rules (a long view: a walk of each message)."""
    start, shortest = 0, min(len(before), len(after))
    while start < shortest and before[start] == after[start]:
        start += 1
    if start == len(before) == len(after):
        return start, (), 0
    end = len(before) - start - 1  # what follows the entry replaced
    if end < 0 or len(after) - end < start or before[start + 1 :] != after[len(after) - end :]:
        return None
    return start, tuple(after[start : len(after) - end]), end


def _holds(mid: str, mine: set[str], stands_for: dict[str, list[str]]) -> bool:
    return mid in stands_for and mid not in mine and not mine.isdisjoint(reached([mid], stands_for))


def _breaks(view: list[str], messages: Mapping[str, Message]) -> bool:
    return bool(invariant_violations([messages[mid] for mid in view if mid in messages]))
