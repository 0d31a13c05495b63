"""Undoing a compaction: the view it gives back, and the bookkeeping of the boundaries
still in force.

A compaction's undo puts back, in place of each message it introduced, what that message
stood for, but never what a rewind still in force took out: a rewind takes a message and
every later one, so a summarized span that holds a rewound message ends before it, and the
rest of the span goes with that rewind (its undo brings it all back, in the order the
messages came), unless the span stands inside a summary the rewind kept, whose text covers
it: it stays whole there (`_kept_inside`), but for what a rewind that did not keep that
summary took. The other boundaries in force are kept in those terms: a summary that stood
for the undone one, and a rewind that took it out, stand for its messages as the view gets
them. Nor does it put back what a summary still in force summarized (a message pinned
beside the undone summary, then unpinned and summarized by a later one): that summary's
undo puts it back, where it came (`undo_place.py`). A rewind's undo is `unrewind.py`'s. An
undo whose view would break the API's rules is refused before anything is written
(`Session.uncompact`), and so is one that another undo must come before (`undo_order.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping

from baton.core.conversation.boundary import Boundary, expand
from baton.core.conversation.summary_text import Texts
from baton.core.conversation.undo_place import attachments_in_place, copies_in_place, put_back
from baton.core.conversation.undo_summarized import Summarized, merged, reached

Inside = dict[str, dict[str, list[str]]]
"""A summary a rewind holds -> what a compaction's undo puts in place of its messages there."""
Placed = tuple[Summarized, set[str], dict[str, list[str]], dict[str, list[str]], Inside]
"""What an undo places (`placing`): worked out once, by its check, for its commit too."""


def rewound_out(view: list[str], active: Iterable[Boundary]) -> set[str]:
    """The messages the rewinds among `active` took out of `view`."""
    out: set[str] = set()
    for boundary in active:
        if boundary.direction == "rewind":
            out.update(boundary.summarized_ids)
    return out - set(view)


def undo_mapping(boundary: Boundary) -> dict[str, list[str]]:
    """What each message compaction `boundary` introduced stands for (an attachment, for
    nothing)."""
    return {m.id: boundary.stands_for.get(m.id, []) for m in boundary.new_messages}


def _spans(
    boundary: Boundary, view: list[str], rewound: Collection[str], held: Collection[str] = ()
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What undoing compaction `boundary` puts in place of each message it introduced, and
    what a rewind in force cut from it (a rewound id -> the span's later ids, those not in
    `view`, rewound already or `held` by another summary)."""
    spans: dict[str, list[str]] = {}
    tails: dict[str, list[str]] = {}
    out = {*view, *held}
    for mid, span in undo_mapping(boundary).items():
        cut = next((n for n, one in enumerate(span) if one in rewound), len(span))
        spans[mid] = span[:cut]
        if cut < len(span):
            later = span[cut + 1 :]
            tails[span[cut]] = [one for one in later if one not in rewound and one not in out]
    return spans, tails


def uncompacted(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    order: Mapping[str, int],
    every: Iterable[Boundary] = (),
    placed: Placed | None = None,
) -> list[str]:
    """The view once compaction `boundary` is undone (`undo_compaction`'s, the boundaries
    still in force, `others`, left as they are); `placed`: `placing`'s, when worked out."""
    summarized, held, spans, _, _ = placed or placing(view, boundary, others, order, every)
    return attachments_in_place(
        copies_in_place(put_back(view, spans, held, summarized), boundary), view, others
    )


def placing(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    order: Mapping[str, int],
    every: Iterable[Boundary],
    texts: Texts | None = None,
) -> Placed:
    """What undoing `boundary` places: what the summaries in force summarized, the
    messages they hold out of the view, the spans put back, the rest of each span cut
    before a rewound message (that rewind's, keyed by the message) and what goes inside
    the summaries a rewind holds (`_held_inside`). `texts`: as `undo_compaction`'s."""
    summarized = Summarized([*every, *others, boundary], others, order, texts)
    held = summarized.elsewhere(view)
    rewound = rewound_out(view, others)
    spans, tails = _spans(boundary, view, rewound, held)
    rewinding = _rewinding(others)  # none in force: nothing is held inside or kept inside
    inside, whole = _held_inside(boundary, view, others) if rewinding else ({}, set())
    mine = undo_mapping(boundary)
    kept_inside = _kept_inside(boundary, view, others) if rewinding else {}
    for mid, kept in kept_inside.items():
        cut, rest = _spans(boundary, view, rewound - kept, held)
        spans[mid] = cut[mid]
        whole.update(one for one in spans[mid] if one in tails)
        tails.update((one, later) for one, later in rest.items() if one in mine[mid])
    tails = {mid: later for mid, later in tails.items() if mid not in whole}
    return summarized, held, spans, tails, inside


def undo_compaction(
    view: list[str],
    boundary: Boundary,
    others: list[Boundary],
    order: Mapping[str, int],
    every: Iterable[Boundary] = (),
    after: list[str] | None = None,
    placed: Placed | None = None,
    texts: Texts | None = None,
) -> list[str]:
    """Undo compaction `boundary`: the view it gives back (`after` when given: that view,
    worked out by `uncompacted` from the same state; `placed`, what it places, `placing`'s
    from that state, the walk of every summary in force its check made already). The
    boundaries still in force (`others`) are brought up to date in place, in the messages
    the undone summary stood for as the view gets them (a span cut before a rewound
    message): what their summaries stand for, and, for a rewind, what it took out and kept
    (its undo puts those back, never the undone summary): a span it holds goes in the
    summary's place, merged with what it holds where its messages came (`put_back`), and the
    rest of a span cut before a message it took follows that message, among what it holds
    where each came (`order`: each message's place in the session; a summary's, where the
    first message its text covers came, not one pinned beside it; a restored file, right
    after the message before it); what it holds otherwise keeps its order (a summary of
    turns from before and after another it holds has no one place among them). `every`:
    the session's boundaries, undone ones too (a summary in force may have summarized one);
    `texts`: what the text of each message covers, read once for the undos a check works
    out one after another (`summary_text.shared_texts`)."""
    placed = placed or placing(view, boundary, others, order, every, texts)
    summarized, held, spans, tails, inside = placed
    if after is None:
        after = uncompacted(view, boundary, others, order, every, placed)
    present = set(view)
    for other in others:
        other.stands_for = {
            k: _put_back_in(v, inside.get(k, spans), summarized)
            for k, v in other.stands_for.items()
        }
    now = Summarized([*every, *others, boundary], others, order, texts)
    for other in others:
        if other.direction == "rewind":
            # a pinned one stays, one a summary summarized goes back with it; what the
            # rewind holds already stays with it (given by an undo, though a summary quotes it)
            skip = present | (held - set(other.summarized_ids))
            out = put_back(other.summarized_ids, spans, skip, summarized)
            for mid in [mid for mid in out if mid in tails]:
                out = _given(out, mid, [one for one in tails[mid] if one not in out], now.came)
            other.view_after = expand(other.view_after, spans, skip=out)
            other.summarized_ids = out
    return after


def _put_back_in(
    ids: list[str], spans: Mapping[str, list[str]], summarized: Summarized
) -> list[str]:
    """`put_back(ids, spans, (), summarized)`: `ids` as they are, each once, where none of
    them has a span (at each undo, what most summaries in force stand for: a long chain's
    hundreds, each read step by step otherwise)."""
    if spans.keys().isdisjoint(ids):
        return list(dict.fromkeys(ids))
    return put_back(ids, spans, (), summarized)


def _rewinding(others: Iterable[Boundary]) -> bool:
    """Whether a rewind is among `others` (without one, `_held_inside` and `_kept_inside`
    find nothing: no walk of the view for them)."""
    return any(other.direction == "rewind" for other in others)


def _given(
    held: list[str], cut: str, rest: list[str], came: Callable[[str], int | None]
) -> list[str]:
    """What a rewind holds (`held`, in the order its undo puts it back) once it is given the
    `rest` of a span cut before `cut`, a message it took: among what follows `cut`, each
    where it came (a summary: where the first message its text covers came), a restored
    file after the message before it (`merged`). The others keep their order (a summary
    among them that covers turns from before and after the rewound message keeps its place
    after the first of those)."""
    at = held.index(cut) + 1
    return held[:at] + merged(held[at:], rest, came)


def _held_inside(
    boundary: Boundary, view: list[str], others: list[Boundary]
) -> tuple[Inside, set[str]]:
    """The summaries of `others` that a rewind holds (out of the view, inside what it took
    out), each with what undoing compaction `boundary` puts in place of its messages there;
    and the rewound messages before which no span of `boundary` is cut anywhere else.

    A span is not cut inside such a summary before a message the same rewind took out: all
    of it goes back with that rewind's undo, while a span cut inside a summary would leave
    the summary standing for turns later than the rest cut off (the rewind holds that rest
    beside it), and undoing the summary then would put those later turns first."""
    stands_for = stands_for_of(others)
    present = set(view)
    in_view = reached(view, stands_for)
    rewound = rewound_out(view, others)
    mine = undo_mapping(boundary)
    inside: Inside = {}
    cut_elsewhere = {mid for mid in mine if mid in in_view}
    for rewind in others:
        if rewind.direction != "rewind":
            continue
        took = [mid for mid in rewind.summarized_ids if mid not in present]
        cut_elsewhere.update(mid for mid in mine if mid in took)
        held = reached(took, stands_for) - in_view
        if not held & set(mine):
            continue
        keep = rewound - set(took)
        spans, _ = _spans(boundary, view, keep)
        for mid in held:
            if mid in stands_for and mid not in mine:
                inside.setdefault(mid, spans)
        # a span cut here before another rewind's message: that rewind takes its rest
        for mid in held & set(mine):
            if any(one in keep for one in mine[mid]):
                cut_elsewhere.add(mid)
    whole = {
        span[next(n for n, one in enumerate(span) if one in rewound)]
        for mid, span in mine.items()
        if mid not in cut_elsewhere and any(one in rewound for one in span)
    }
    return inside, whole


def _kept_inside(
    boundary: Boundary, view: list[str], others: list[Boundary]
) -> dict[str, set[str]]:
    """The messages compaction `boundary` introduced that stand inside a summary of the
    view, where a rewind that kept that summary took a message of their span (pinned beside
    it), each with what such rewinds took: the summary's text covers the span, so the span
    stays whole inside it. Cut before the rewound message, with its rest given to the
    rewind, the rest would come back, on the rewind's undo, after turns the summary holds
    that came after it. A message of the span that a rewind which did not keep the summary
    took (one from before the summary was made, pinned beside the undone one) is not in
    what the summary covers: the span is still cut before it."""
    stands_for = stands_for_of(others)
    present = set(view)
    in_view = reached(view, stands_for)
    holder = {one: mid for mid, span in stands_for.items() for one in span}
    out: dict[str, set[str]] = {}
    for mid, span in undo_mapping(boundary).items():
        if mid in present or mid not in in_view or mid not in holder:
            continue
        for rewind in others:
            if rewind.direction != "rewind" or set(rewind.summarized_ids).isdisjoint(span):
                continue
            if holder[mid] in reached(rewind.view_after, stands_for):
                out.setdefault(mid, set()).update(rewind.summarized_ids)
    return out


def stands_for_of(boundaries: Iterable[Boundary]) -> dict[str, list[str]]:
    """What each message the `boundaries` introduced stands for, all in one map."""
    out: dict[str, list[str]] = {}
    for boundary in boundaries:
        out.update(boundary.stands_for)
    return out
