"""What each summary in force stands for and summarized, and where each message came, as a
compaction's undo reads them (`Summarized`, `reached`, `first_came`), and two lists of them
merged where each came (`merged`): where it puts them back is `undo_place.py`'s."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.summary_text import Texts, looped


class Summarized:
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
        texts: Texts | None = None,
    ) -> None:
        """`texts`: what each message's text covers, kept from the undo before
        (`summary_text.shared_texts`); else read afresh."""
        self._owner = {m.id: b for b in every for m in b.new_messages}
        self._stands_for: dict[str, list[str]] = {}
        self.copies: dict[str, str] = {}  # a message -> the microcompacted copy in force of it
        for other in others:
            self._stands_for.update(other.stands_for)
            if other.direction == "microcompact":
                self.copies.update((was[0], copy) for copy, was in other.stands_for.items() if was)
        self._order = order
        self._texts = Texts(self._owner) if texts is None else texts.fresh()
        self._of: dict[str, AbstractSet[str]] = {}
        self._came: dict[str, int | None] = {}

    def covered(self, mid: str) -> frozenset[str]:
        """The messages the text of `mid` covers (itself, for a message): a copy a summary
        summarized is covered as well as its original, so an undo that would put the
        original back as that copy leaves it inside the summary."""
        return self._texts.covered(mid)

    def of(self, mid: str) -> AbstractSet[str]:
        """The messages `mid` stands for and summarized (itself, for a message)."""
        if mid not in self._stands_for:
            return {mid}
        known = self._of.get(mid)
        if known is None:
            known = self._of[mid] = reached([mid], self._stands_for) & self.covered(mid)
        return known

    def came(self, mid: str) -> int | None:
        """Where `mid` came (a summary: the first message it summarized); None for an
        attachment, which keeps its place: a fresh copy of a restored file too, though it
        stands for the stale copies it replaced (it came where it stands, not with them).
        A summary of attachments only (a range compaction of a restored file, or a summary
        of such a summary) keeps its place as they do: they were written with their
        compaction, after every turn of the view they went into, not where they stood."""
        if self._stands_for.get(mid, [mid]) == [] or self._attachment(mid):
            return None
        if mid in self._came:
            return self._came[mid]
        first = self.of(mid) or reached([mid], self._stands_for)
        order = self._order
        known = order.keys() & first
        turns = {one for one in known if not self._introduced(one)}
        came = min(map(order.__getitem__, turns or known), default=len(order))
        placeless = not turns and any(map(self._attachment, known))
        if mid in self._stands_for:  # a summary: asked at each step of a span put back
            self._came[mid] = None if placeless else came
        return None if placeless else came

    def _introduced(self, mid: str) -> bool:
        """Whether `mid` is a summary or an attachment (not a microcompacted copy)."""
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
        return mid in self._stands_for and not reached([mid], self._stands_for).isdisjoint(ids)

    def stood_for(self, mid: str) -> set[str]:
        """`mid` and every message it stands for, through the summaries in force."""
        return reached([mid], self._stands_for)

    def elsewhere(self, view: list[str]) -> set[str]:
        """The messages a summary in force summarized, out of `view`: an undo leaves them
        inside it. A message pinned beside a summary, then unpinned and summarized by a
        later one, is in both spans: undoing the older summary while the later one stands
        does not put it back beside the summary that quotes it (the model would get it
        twice)."""
        for mid in self._stands_for:  # in this order: summaries that name each other
            self._texts.text(mid)
        tops = self._stands_for if self._looped() else self._outermost()
        out: set[str] = set().union(*(self.of(mid) for mid in tops))
        for mid in tops:  # not in what it summarized itself, maybe in another's
            if mid in out and not any(mid in self.of(other) for other in tops if other != mid):
                out.discard(mid)
        return out.difference(view)

    def _outermost(self) -> list[str]:
        """The summaries in force but those another one in force stands for and summarized
        as they are (its text holds theirs, worked out before it): what they stand for and
        summarized, that one does too, so a walk of each (the square of a long chain)
        finds nothing more. Only where no summary stands, through others, for itself."""
        inner: set[str] = set()
        for mid, span in self._stands_for.items():
            text = self._texts.text(mid)
            if text is None:
                continue
            direct = self._stands_for.keys() & set(span)
            for part, below in text.nested() if direct else ():
                if part != mid and part in direct and below is self._texts.text(part):
                    inner.add(part)
        return [mid for mid in self._stands_for if mid not in inner]

    def _looped(self) -> bool:
        """Whether a summary in force stands, through others, for itself (a malformed
        file)."""
        keys = self._stands_for.keys()
        return looped({mid: keys & set(span) for mid, span in self._stands_for.items()})


def first_came(mid: str, stands_for: dict[str, list[str]], order: Mapping[str, int]) -> int:
    """Where `mid` (a message, or the first of what a summary stands for) came."""
    return min(
        (order[one] for one in reached([mid], stands_for) if one in order), default=len(order)
    )


def reached(ids: Iterable[str], stands_for: dict[str, list[str]]) -> set[str]:
    """`ids` and every id they stand for, through `stands_for` (each span taken in whole,
    not one id at a time: a long chain's summaries stand, through each other, for tens of
    thousands of messages)."""
    out = set(ids)
    keys = stands_for.keys()
    stack = list(keys & out)
    while stack:
        fresh = set(stands_for[stack.pop()])
        fresh -= out
        if fresh:
            out |= fresh
            stack.extend(keys & fresh)
    return out


def merged(ids: list[str], given: list[str], came: Callable[[str], int | None]) -> list[str]:
    """`ids` and `given` merged, each keeping its order: one of `given` goes before one of
    `ids` that came after it. One with no place of its own (`came` says None: a restored
    file, written with its compaction, after the turns around it) follows the one before it
    in its list, as it stood: not where it was written, past turns of the other list that
    came before that."""
    keys, more = _keys(ids, came), _keys(given, came)
    out: list[str] = []
    n = k = 0
    while n < len(ids) and k < len(given):
        if more[k] < keys[n]:
            out.append(given[k])
            k += 1
        else:
            out.append(ids[n])
            n += 1
    return out + ids[n:] + given[k:]


def _keys(ids: list[str], came: Callable[[str], int | None]) -> list[int]:
    """Where each of `ids` came, one with no place of its own where the one before it did
    (the first: before them all)."""
    out: list[int] = []
    for mid in ids:
        arrived = came(mid)
        out.append((out[-1] if out else -1) if arrived is None else arrived)
    return out
