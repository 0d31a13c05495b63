"""Where a compaction's undo puts messages back: what it leaves inside a summary still in
force, and the order of the messages it puts back among those around them."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping
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


def put_back(
    ids: list[str],
    spans: Mapping[str, list[str]],
    held: Collection[str],
    summarized: Summarized,
) -> list[str]:
    """`expand(ids, spans, skip=held)`, each span merged, in the order the messages came,
    with the entries just before it that came after it starts: a message an older
    summary's undo left inside a later one goes back where it came, before the turns that
    followed it, not after them. An attachment among those entries follows the message
    before it (a restored file written after the turns a compaction kept: the message goes
    back past it, before those turns, when they came after it); one with nothing placed
    before it that came after the span starts ends the entries merged with, and so does a
    summary that stands for a message of the span that came after the
    first message it summarized (kept verbatim beside it, the message follows it, as the
    compaction laid it out; one that came before goes before it, unless the summary undone
    kept it pinned beside it too: it stayed after the older one all along). The messages
    just after a span that came before its later ones go among them too (`_among`). A
    message of a span that a microcompaction in force replaced goes back as its copy, in
    its place (a tool result kept beside the summary, cleared since, still answers the
    call before it). A run of entries between spans goes as it is, in whole, when none of
    it was placed already (a long view's undo: a few spans among tens of thousands)."""
    out: list[str] = []
    placed = set(held)
    keys: dict[str, int] = {}
    region: int | None = None  # where the span last put back starts in `out`
    starts = _span_starts(ids, spans)
    present = set(ids)
    n, total, tried = 0, len(ids), -1  # tried: a run found not clear, gone one at a time
    while n < total:
        if region is None and starts is not None:
            at = bisect_left(starts, n)
            end = starts[at] if at < len(starts) else total
            if n < end != tried:
                run = ids[n:end]
                if placed.isdisjoint(run):
                    out += run
                    placed.update(run)
                    n = end
                    continue
                tried = end
        mid = ids[n]
        n += 1
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
            if mid not in spans:
                if not block:
                    continue  # placed in the span already (pinned beside its summary)
                if region is not None and _among(out, region, block[0], keys, summarized):
                    continue
            region = None
            out += block
            continue
        came = {one: summarized.came(one) for one in block}  # once, not at every step back
        beside = [one for one in block if one not in summarized.covered(mid)]  # pinned
        start = len(out)
        while start:
            before = summarized.came(out[start - 1])
            if before is None:  # an attachment follows the message before it
                k = start - 1
                while k and summarized.came(out[k - 1]) is None:
                    k -= 1
                before = summarized.came(out[k - 1]) if k else None
            if before is None or before <= first:
                break
            later = [one for one in block if (came[one] or first) > before]
            if summarized.stands_for_any(out[start - 1], later + beside):
                break
            start -= 1
            keys[out[start]] = before
        for one in block:  # an attachment among them follows the message before it
            arrived = came[one]
            first = keys[one] = first if arrived is None else arrived
        run, out[start:] = out[start:], []
        while run and block:
            out.append(run.pop(0) if keys[run[0]] < keys[block[0]] else block.pop(0))
        out += run + block
        region = start
    return out


def _staying(
    ids: list[str],
    at: int,
    span: list[str],
    placed: AbstractSet[str],
    present: AbstractSet[str],
    summarized: Summarized,
) -> set[str]:
    """The messages of a span put back before `at` in `ids` (in its summary's place) that
    stay where they are: each one kept verbatim beside the summary, later in `ids`, with
    entries between them that are not of the span and came before it (an older summary's
    undo put back there turns from before it), when the messages the span puts back came
    before it too. Pulled back into the span, it would go before those turns (past a
    restored file, which ends the entries merged with)."""
    shown = [one for one in span if one in present and one not in placed]
    if not shown:
        return set()
    going = (summarized.came(one) for one in span if one not in present and one not in placed)
    last = max((came for came in going if came is not None), default=-1)
    of_span = set(span)
    out: set[str] = set()
    for one in shown:
        arrived = summarized.came(one)
        if arrived is None or arrived < last:
            continue
        try:
            where = ids.index(one, at)
        except ValueError:  # before the summary: placed with the entries before it
            continue
        between = [e for e in ids[at:where] if e not in of_span]
        came = [summarized.came(e) for e in between]
        if between and all(c is None or c < arrived for c in came):
            out.add(one)
    return out


def _span_starts(ids: list[str], spans: Mapping[str, list[str]]) -> list[int] | None:
    """Where in `ids` each span goes, in order; None when an entry is there twice (each is
    then gone through one at a time)."""
    present = set(ids)
    if len(present) != len(ids):
        return None
    return sorted(ids.index(mid) for mid in spans if mid in present)


def copies_in_place(view: list[str], boundary: Boundary) -> list[str]:
    """`view`, compaction `boundary` undone, with each stale copy of a file that one fresh
    copy replaced, past the first, back after the message it followed before the
    compaction: the fresh copy took the first one's place and stood for the others too
    (an undo had brought an older copy back beside a later one), so they came back
    together. One whose place is gone (that message is out of the view) stays there."""
    out = list(view)
    before = boundary.view_before
    for message in boundary.new_messages:
        if message.id == boundary.summary_id:
            continue
        for mid in boundary.stands_for.get(message.id, [])[1:]:
            at = before.index(mid) if mid in before else 0
            if not at or mid not in out or before[at - 1] not in out:
                continue
            out.remove(mid)
            out.insert(out.index(before[at - 1]) + 1, mid)
    return out


def attachments_in_place(view: list[str], was: list[str], others: Iterable[Boundary]) -> list[str]:
    """`view`, an undo's (`was`, the view before), with each attachment of a compaction
    still in force (`others`) that the undo put back right after the entry it followed in
    the view that compaction made, when that entry is before it: a stale copy of a file
    whose fresh copy's compaction was undone inside later summaries stood, in the summary
    that had held the fresh copy, where the fresh copy was written (between a prompt and
    its reply, for a compaction up to the prompt); it goes back where it stood, after the
    summary it was restored with (where a rewind that kept it has it too)."""
    out = list(view)
    shown, before = set(out), set(was)
    for other in others:
        if other.direction in ("rewind", "microcompact"):
            continue
        laid_out = other.view_after
        for message in other.new_messages:
            mid = message.id
            if mid == other.summary_id or mid in before or mid not in shown:
                continue
            at = laid_out.index(mid) if mid in laid_out else 0
            if not at or laid_out[at - 1] not in shown:
                continue
            follows = out.index(laid_out[at - 1])
            if follows < out.index(mid) - 1:
                out.remove(mid)
                out.insert(follows + 1, mid)
    return out


def _among(
    out: list[str], region: int, one: str, keys: dict[str, int], summarized: Summarized
) -> bool:
    """Put `one`, an entry after a span put back (from `region` on in `out`), among the
    span's messages that came after it, where it came: the span of a summary of turns
    from before and after it (a rewind's undo put it after the summary, or it was kept
    beside it) goes back around it. False, leaving `out` alone, when it came after them
    all or before them all, is an attachment, or is a summary of a turn that came after
    one of those it would go before (one of turns from before and after the span keeps
    its place after it). It never goes before a summary it was pinned beside: the
    compaction laid pinned messages out after their summary."""
    arrived = summarized.came(one)
    if arrived is None or arrived >= keys[out[-1]]:
        return False
    at = len(out)
    while at > region and keys[out[at - 1]] > arrived:
        if summarized.stands_for_any(out[at - 1], (one,)):
            break  # pinned beside that summary, which its compaction laid out before it
        at -= 1
    if at in (region, len(out)):
        return False
    if summarized.summary(one) and summarized.last_came(one) > min(keys[m] for m in out[at:]):
        return False
    out.insert(at, one)
    keys[one] = arrived
    return True


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
