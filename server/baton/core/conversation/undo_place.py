"""Where a compaction's undo puts messages back: the order of the messages it puts back among
those around them, and the places of copies and attachments of compactions still in force
(what each summary stands for, and where each message came: `undo_summarized.py`)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.undo_summarized import Summarized


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
    just after a span that came before its later ones go among them too (`_among`), past a
    restored file of the undone compaction between them, which puts nothing back. A
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


def merged_back(
    out: list[str],
    block: list[str],
    first: int,
    beside: list[str],
    keys: dict[str, int],
    summarized: Summarized,
) -> int:
    """Put `block`, a span's messages (the first came at `first`; `beside`: those pinned
    beside the undone summary), at the end of `out`, merged, where each came, with the
    entries just before it that came after it starts (`keys`: where each entry merged
    came); where the merge starts in `out`. A summary among those entries that stands for
    a message of the block that came after the first message it summarized, or that was
    pinned beside the undone summary too, keeps that message and every later one of the
    block after it, as the compactions laid them out; the messages of the block before
    those go past it, where they came, when one of them came before it (an older summary's
    undo left turns from before it inside a summary of turns from before and after it, laid
    out after it), else it ends the entries merged with."""
    came = {one: summarized.came(one) for one in block}  # once, not at every step back
    start = len(out)
    follows: dict[str, int] = {}  # a summary merged with -> the block's first one after it
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
            kept = summarized.stood_for(out[start - 1]).intersection(later + beside)
            cut = next(n for n, one in enumerate(block) if one in kept)
            if not any(at is not None and at < before for at in map(came.get, block[:cut])):
                break
            follows[out[start - 1]] = cut
        start -= 1
        keys[out[start]] = before
    for one in block:  # an attachment among them follows the message before it
        arrived = came[one]
        first = keys[one] = first if arrived is None else arrived
    run, out[start:] = out[start:], []
    due = [len(block)] * (len(run) + 1)  # the block's first one after run[k] or a later one
    for k in range(len(run) - 1, -1, -1):
        due[k] = min(due[k + 1], follows.get(run[k], len(block)))
    n = k = 0
    while k < len(run) and n < len(block):
        if n >= due[k] or keys[run[k]] < keys[block[n]]:
            out.append(run[k])
            k += 1
        else:
            out.append(block[n])
            n += 1
    out += run[k:] + block[n:]
    return start


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
