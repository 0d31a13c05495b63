"""The walk of every summary in force as `undo_place.Summarized` made it before it was
made near-linear, kept verbatim, and an undo's bookkeeping as `undo` made it before it
skipped the work that finds nothing (a test's reference only): the differential tests
give both the same sessions and compare every answer."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.undo_place import put_back, reached


def reference_put_back_in(
    ids: list[str], spans: Mapping[str, list[str]], summarized: ReferenceSummarized
) -> list[str]:
    """What a summary in force stands for once an undo puts its spans back, each read."""
    return put_back(ids, spans, (), summarized)  # type: ignore[arg-type]


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
        self, every: Iterable[Boundary], others: Iterable[Boundary], order: Mapping[str, int]
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
        return reached([mid], self._stands_for) & self.covered(mid)

    def came(self, mid: str) -> int | None:
        """Where `mid` came (a summary: the first message it summarized); None for an
        attachment, which keeps its place: a fresh copy of a restored file too, though it
        stands for the stale copies it replaced (it came where it stands, not with them)."""
        if self._stands_for.get(mid, [mid]) == [] or self._attachment(mid):
            return None
        first = self.of(mid) or reached([mid], self._stands_for)
        order = self._order
        return min((order[one] for one in first if one in order), default=len(order))

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

    def elsewhere(self, view: list[str]) -> set[str]:
        """The messages a summary in force summarized, out of `view`: an undo leaves them
        inside it. A message pinned beside a summary, then unpinned and summarized by a
        later one, is in both spans: undoing the older summary while the later one stands
        does not put it back beside the summary that quotes it (the model would get it
        twice)."""
        out = {one for mid in self._stands_for for one in self.of(mid) if one != mid}
        return out.difference(view)
