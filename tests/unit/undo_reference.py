"""The walk of every summary in force as `undo_summarized.Summarized` made it before it was
made near-linear, kept verbatim, an undo's bookkeeping as `undo` made it before it
skipped the work that finds nothing, `reached` and `put_back` as they went one id at a
time, and the check of the undos ahead (`undo_ahead.broken_ahead`) as it read the texts
afresh at each undo it works out on a copy and checked the view at each, twice (a
test's reference only): the differential tests give both the same sessions and compare
every answer."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message
from baton.core.conversation.undo import stands_for_of, undo_compaction, undo_mapping
from baton.core.conversation.undo_ahead import Watched, _breaks, _holds
from baton.core.conversation.undo_place import _among, _staying, merged_back


def reference_reached(ids: Iterable[str], stands_for: dict[str, list[str]]) -> set[str]:
    """`ids` and every id they stand for, through `stands_for`, one id at a time."""
    out: set[str] = set()
    stack = list(ids)
    while stack:
        one = stack.pop()
        if one not in out:
            out.add(one)
            stack.extend(stands_for.get(one, []))
    return out


def reference_shared_texts(every: Iterable[Boundary]) -> None:
    """What each text covers: read afresh at each undo."""
    return None


def reference_put_back_in(
    ids: list[str], spans: Mapping[str, list[str]], summarized: ReferenceSummarized
) -> list[str]:
    """What a summary in force stands for once an undo puts its spans back, each read."""
    return reference_put_back(ids, spans, (), summarized)


def reference_rewinding(others: Iterable[Boundary]) -> bool:
    """Whether to look for what rewinds hold inside summaries: always."""
    return True


class ReferenceSummarized:
    """What each summary in force (each message the boundaries in force, `others`,
    introduced) stands for and summarized: what its undo would put back (`stands_for`)
    that its text covers, as messages of the session. A summary's text covers its
    `summarized_ids`, each summary or microcompacted copy among them itself and read the
    same way, whether or not its compaction is still in force (`every`: all the session's
    boundaries); a copy covers its original. A message pinned beside a summary is in what
    it stands for, not in what it summarized; one a rewind took back out of it is in
    neither."""

    def __init__(
        self,
        every: Iterable[Boundary],
        others: Iterable[Boundary],
        order: Mapping[str, int],
        texts: object = None,  # read afresh, always
    ) -> None:
        self._owner = {m.id: b for b in every for m in b.new_messages}
        self._stands_for: dict[str, list[str]] = {}
        self.copies: dict[str, str] = {}  # a message -> the microcompacted copy in force of it
        for other in others:
            self._stands_for.update(other.stands_for)
            if other.direction == "microcompact":
                self.copies.update((was[0], copy) for copy, was in other.stands_for.items() if was)
        self._order = order
        self._text: dict[str, frozenset[str]] = {}

    def covered(self, mid: str) -> frozenset[str]:
        """The messages the text of `mid` covers (itself, for a message): a copy a summary
        summarized is covered as well as its original, so an undo that would put the
        original back as that copy leaves it inside the summary."""
        boundary = self._owner.get(mid)
        if boundary is None:
            return frozenset((mid,))
        if mid not in self._text:
            self._text[mid] = frozenset()  # a record that names itself covers nothing
            base = boundary.summarized_ids if mid == boundary.summary_id else []
            base = base or boundary.stands_for.get(mid, [])
            self._text[mid] = frozenset(one for part in base for one in (part, *self.covered(part)))
        return self._text[mid]

    def of(self, mid: str) -> set[str]:
        """The messages `mid` stands for and summarized (itself, for a message)."""
        if mid not in self._stands_for:
            return {mid}
        return reference_reached([mid], self._stands_for) & self.covered(mid)

    def came(self, mid: str) -> int | None:
        """Where `mid` came (a summary: the first message it summarized); None for an
        attachment, which keeps its place: a fresh copy of a restored file too, though it
        stands for the stale copies it replaced (it came where it stands, not with them)."""
        if self._stands_for.get(mid, [mid]) == [] or self._attachment(mid):
            return None
        first = self.of(mid) or reference_reached([mid], self._stands_for)
        order = self._order
        known = [one for one in first if one in order]
        turns = [one for one in known if not self._introduced(one)]
        if not turns and mid in self._stands_for and any(map(self._attachment, known)):
            return None  # a summary of attachments only keeps its place as they do
        return min((order[one] for one in turns or known), default=len(order))

    def _introduced(self, mid: str) -> bool:
        """Whether `mid` is a summary or an attachment, not a microcompacted copy."""
        boundary = self._owner.get(mid)
        return boundary is not None and boundary.direction != "microcompact"

    def _attachment(self, mid: str) -> bool:
        """Whether `mid` is an attachment a compaction in force introduced (neither its
        summary nor a microcompacted copy, which goes where its original came)."""
        boundary = self._owner.get(mid)
        if boundary is None or mid not in self._stands_for or boundary.summary_id == mid:
            return False
        return boundary.direction != "microcompact"

    def summary(self, mid: str) -> bool:
        """Whether `mid` is a summary (not a message, a copy or an attachment)."""
        boundary = self._owner.get(mid)
        return boundary is not None and boundary.summary_id == mid

    def last_came(self, mid: str) -> int:
        """Where the last message `mid` stands for and summarized came."""
        order = self._order
        plain = [order[one] for one in self.of(mid) if one in order and one not in self._owner]
        return max(plain, default=len(order))

    def stands_for_any(self, mid: str, ids: Collection[str]) -> bool:
        """Whether `mid` is a summary that stands for one of `ids`."""
        stands_for = self._stands_for
        return mid in stands_for and not reference_reached([mid], stands_for).isdisjoint(ids)

    def stood_for(self, mid: str) -> set[str]:
        """`mid` and every message it stands for, through the summaries in force."""
        return reference_reached([mid], self._stands_for)

    def elsewhere(self, view: list[str]) -> set[str]:
        """The messages a summary in force summarized, out of `view`: an undo leaves them
        inside it. A message pinned beside a summary, then unpinned and summarized by a
        later one, is in both spans: undoing the older summary while the later one stands
        does not put it back beside the summary that quotes it (the model would get it
        twice)."""
        out = {one for mid in self._stands_for for one in self.of(mid) if one != mid}
        return out.difference(view)


def reference_put_back(
    ids: list[str],
    spans: Mapping[str, list[str]],
    held: Collection[str],
    summarized: Any,
) -> list[str]:
    """`undo_place.put_back` as it went through `ids`, one entry at a time."""
    out: list[str] = []
    placed = set(held)
    keys: dict[str, int] = {}
    region: int | None = None  # where the span last put back starts in `out`
    present = set(ids)
    for n, mid in enumerate(ids, 1):
        block: list[str] = []
        span = spans.get(mid, [mid])
        stay = _staying(ids, n, span, placed, present, summarized) if mid in spans else ()
        for one in span:
            if one in stay:
                continue
            was = {one}  # a malformed file's copies may stand for each other
            while one in held and summarized.copies.get(one, one) not in was:
                one = summarized.copies[one]
                was.add(one)
            if one not in placed:
                block.append(one)
                placed.add(one)
        first = summarized.came(block[0]) if mid in spans and block else None
        if first is None:
            if not block:  # placed in the span already (pinned beside its summary), or an
                continue  # attachment of the undone compaction: the entries after it follow
            if (
                mid not in spans
                and region is not None
                and _among(out, region, block[0], keys, summarized)
            ):
                continue
            region = None
            out += block
            continue
        beside = [one for one in block if one not in summarized.covered(mid)]  # pinned
        region = merged_back(out, block, first, beside, keys, summarized)
    return out


def reference_broken_ahead(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    order: Mapping[str, int],
    every: Iterable[Boundary],
    messages: Mapping[str, Message],
    watched: Watched | None = None,
) -> str | None:
    """`undo_ahead.broken_ahead` as it worked out whether each undo on a copy broke the
    view, without `boundary` undone, before it looked at them with it undone. The
    compaction in force holding the summary of compaction `boundary` (inside
    another summary, or pinned beside it) whose undo, once `boundary` is undone, would give
    a view that breaks the API's rules, where it gives a valid one now. A message pinned
    beside the undone summary, then unpinned and summarized by another summary, stays
    inside that one: the span, without the session's first prompt, would open the view
    with a reply. Undoing that compaction first keeps the span whole. None when none
    would. Each undo it works out walks the whole view (a long chain: one per summary
    that holds `boundary`, twice): `watched` hears each, and may stop the check."""
    every = list(every)
    mine = set(undo_mapping(boundary))
    walked = [o.model_copy() for o in others]
    watched = watched or Watched()
    steps, broke = _reference_holders(view, mine, walked, order, every, messages, watched)
    if not steps:
        return None
    copies = [other.model_copy() for other in others]  # the undos update them
    after = undo_compaction(view, boundary, copies, order, every)
    for n, (holder, was_broken) in enumerate(zip(steps, broke, strict=True)):
        watched.step(
            f"Checking their undos once it is undone: {n:,} of {len(steps):,}", n / len(steps)
        )
        one = next(copy for copy in copies if copy.id == holder)
        copies.remove(one)
        after = undo_compaction(after, one, copies, order, every)
        if _breaks(after, messages) and not was_broken:
            return holder
    return None


def _reference_holders(
    view: list[str],
    mine: set[str],
    boundaries: list[Boundary],
    order: Mapping[str, int],
    every: list[Boundary],
    messages: Mapping[str, Message],
    watched: Watched,
) -> tuple[list[str], list[bool]]:
    """The compactions to undo, outermost first, until no summary in the view stands for
    one of the summaries `mine` (one pinned beside another stays in the view), and whether
    each undo breaks the API's rules (`boundaries` are updated)."""
    steps: list[str] = []
    broke: list[bool] = []
    while True:
        stands_for = stands_for_of(boundaries)
        top = next((mid for mid in view if _holds(mid, mine, stands_for)), None)
        holder = next((b for b in boundaries if top is not None and top in b.stands_for), None)
        if holder is None:
            break
        watched.step(f"Undoing the compactions that hold it, on a copy: {len(steps):,}")
        boundaries.remove(holder)
        view = undo_compaction(view, holder, boundaries, order, every)
        steps.append(holder.id)
        broke.append(_breaks(view, messages))
    return steps, broke
