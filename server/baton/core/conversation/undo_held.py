"""What a compaction's undo does with what a rewind in force holds: each span cut before a
message a rewind took, its rest given to that rewind (`cut_spans`), a span that stays whole
inside a summary a rewind holds (`held_inside`), one that stays whole inside a summary of
the view that a rewind kept (`kept_inside_of`), and what of a span a rewind holds goes back
into the view, as the rewind kept it (`kept_by_holder`). `undo.py` places what they give."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.undo_summarized import reached

Inside = dict[str, dict[str, list[str]]]
"""A summary a rewind holds -> what a compaction's undo puts in place of its messages there."""


def cut_spans(
    mine: Mapping[str, list[str]],
    view: list[str],
    rewound: Collection[str],
    held: Collection[str] = (),
    taker: Mapping[str, str] | None = None,
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What undoing a compaction puts in place of each message it introduced (`mine`: what
    each stands for), and what a rewind in force cut from it (a rewound id -> the span's
    ids after it, up to one another rewind took, those not in `view`, rewound already or
    `held` by another summary; `taker`: the rewind that took each rewound message): a
    rewind takes a message and every later one, so what follows a message an older rewind
    took (a span from before and after both) is that rewind's, not the later one's that
    took a message before it. A span is not cut before a message the rewind that took its
    summary out took too (pinned beside it): the span goes back in the summary's place
    among what that rewind holds, each message where it came (cut, the rest would follow
    the pinned message where the summary laid it out, after turns that came after it)."""
    spans: dict[str, list[str]] = {}
    tails: dict[str, list[str]] = {}
    out = {*view, *held}
    shown = set(view)
    took = taker or {}
    for mid, span in mine.items():
        own = None if mid in shown else took.get(mid)  # the rewind holding the summary
        cut = next(
            (n for n, one in enumerate(span) if one in rewound and took.get(one, "") != own),
            len(span),
        )
        spans[mid] = span[:cut]
        head = ""
        for one in span[cut:]:  # what follows a rewind's message, up to another rewind's
            if one in rewound:
                if not head or took.get(one) != took.get(head):
                    head = one
                    tails[head] = []
            elif one not in out:
                tails[head].append(one)
    return spans, tails


def held_inside(
    mine: Mapping[str, list[str]],
    view: list[str],
    others: list[Boundary],
    stands_for: dict[str, list[str]],
    rewound: set[str],
) -> tuple[Inside, set[str]]:
    """The summaries of `others` that a rewind holds (out of the view, inside what it took
    out), each with what undoing a compaction (`mine`: what each message it introduced
    stands for) puts in place of its messages there; and the rewound messages before which
    no span of it is cut anywhere else. `stands_for`: what each message `others`
    introduced stands for; `rewound`: what their rewinds took out of `view`.

    A span is not cut inside such a summary before a message the same rewind took out: all
    of it goes back with that rewind's undo, while a span cut inside a summary would leave
    the summary standing for turns later than the rest cut off (the rewind holds that rest
    beside it), and undoing the summary then would put those later turns first. One cut
    before a message another rewind took (which takes what follows it) goes on inside after
    a message this one took: what follows that came after this rewind's message."""
    present = set(view)
    in_view = reached(view, stands_for)
    inside: Inside = {}
    whole: set[str] = set()
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
        spans = {mid: _inside(span, keep, set(took)) for mid, span in mine.items()}
        for mid in held:
            if mid in stands_for and mid not in mine:
                inside.setdefault(mid, spans)
        # a span cut here before another rewind's message: that rewind takes what follows
        # it, up to a message this one took, after which the span goes on inside
        for mid in held & set(mine):
            if any(one in keep for one in mine[mid]):
                cut_elsewhere.add(mid)
                whole.update(one for one in mine[mid] if one in took)
    whole.update(
        one
        for mid, span in mine.items()
        if mid not in cut_elsewhere
        for one in span
        if one in rewound
    )
    return inside, whole


def _inside(span: list[str], keep: Collection[str], took: Collection[str]) -> list[str]:
    """What of `span` stays inside a summary a rewind holds (`took`: what it took out): all
    but each part from a message another rewind took (`keep`) up to one this one took."""
    out: list[str] = []
    going = True
    for one in span:
        if one in keep or one in took:
            going = one in took
        if going:
            out.append(one)
    return out


def kept_inside_of(
    mine: Mapping[str, list[str]],
    view: list[str],
    others: list[Boundary],
    stands_for: dict[str, list[str]],
) -> dict[str, set[str]]:
    """The messages a compaction introduced (`mine`: what each stands for) that stand
    inside a summary of the view, where a rewind that kept that summary took a message of
    their span (pinned beside it), each with what such rewinds took: the summary's text
    covers the span, so the span stays whole inside it. Cut before the rewound message,
    with its rest given to the rewind, the rest would come back, on the rewind's undo, after
    turns the summary holds that came after it. A message of the span that a rewind which
    did not keep the summary took (one from before the summary was made, pinned beside the
    undone one) is not in what the summary covers: the span is still cut before it.
    `stands_for`: what each message `others` introduced stands for."""
    present = set(view)
    in_view = reached(view, stands_for)
    holder = {one: mid for mid, span in stands_for.items() for one in span}
    out: dict[str, set[str]] = {}
    for mid, span in mine.items():
        if mid in present or mid not in in_view or mid not in holder:
            continue
        for rewind in others:
            if rewind.direction != "rewind" or set(rewind.summarized_ids).isdisjoint(span):
                continue
            if holder[mid] in reached(rewind.view_after, stands_for):
                out.setdefault(mid, set()).update(rewind.summarized_ids)
    return out


def kept_by_holder(
    view: list[str],
    others: list[Boundary],
    stands_for: dict[str, list[str]],
    spans: Mapping[str, list[str]],
    elsewhere: Collection[str],
    came: Callable[[str], int | None],
) -> list[str]:
    """The messages of the spans a compaction's undo puts back (`spans`) whose summary a
    rewind among `others` took out (itself, not inside another summary) that the rewind
    kept, out of `view` and not `elsewhere` (rewound, or held by a summary in force), in
    their spans' order: a tool call pinned beside an older summary, summarized since by
    this one and left inside it when the older one was undone (before the rewind or
    since: one that came before the message the rewind was to is not the rewind's, which
    takes that message and every later one). They go back into the view, where they came
    among the turns the rewind kept around them: given to the rewind, its undo would put
    them after those. `stands_for`: what each message `others` introduced stands for;
    `came`: where each message came (None: an attachment)."""
    present = set(view)
    introduced = {*stands_for, *spans}
    out: list[str] = []
    for rewind in others:
        if rewind.direction != "rewind":
            continue
        kept = reached(rewind.view_after, stands_for)
        point = _point(rewind, came, introduced)
        for mid in rewind.summarized_ids:
            if mid not in present and mid in spans:
                out += [
                    one
                    for one in spans[mid]
                    if one not in present and (one in kept or _before(came(one), point))
                ]
    return [one for one in dict.fromkeys(out) if one not in elsewhere]


def _point(
    rewind: Boundary, came: Callable[[str], int | None], introduced: Collection[str]
) -> int | None:
    """Where the message a rewind was to came (the first it took out); None when it was to
    a message a compaction `introduced` (a summary: what it covers has no one place)."""
    cut = len(rewind.kept_ids)
    if cut >= len(rewind.view_before) or rewind.view_before[cut] in introduced:
        return None
    return came(rewind.view_before[cut])


def _before(arrived: int | None, point: int | None) -> bool:
    return arrived is not None and point is not None and arrived < point
