"""Undoing a compaction: the view it gives back, and the bookkeeping of the boundaries
still in force.

A compaction's undo puts back, in place of each message it introduced, what that message
stood for, but never what a rewind still in force took out: a rewind takes a message and
every later one, so a summarized span that holds a rewound message ends before it, and the
rest of the span goes with that rewind (its undo brings it all back, in the order the
messages came), unless the span stands inside a summary the rewind kept, whose text covers
it: it stays whole there, but for what a rewind that did not keep that summary took (what
the undo does with what a rewind holds is `undo_held.py`'s). The other boundaries in force
are kept in those terms: a summary that stood for the undone one, and a rewind that took it
out, stand for its messages as the view gets them. Nor does it put back what a summary
still in force summarized (a message pinned beside the undone summary, then unpinned and
summarized by a later one): that summary's undo puts it back, where it came
(`undo_place.py`). A rewind's undo is `unrewind.py`'s. An undo whose view would break the
API's rules is refused before anything is written (`Session.uncompact`), and so is one
that another undo must come before (`undo_order.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from baton.core.conversation.boundary import Boundary, expand
from baton.core.conversation.summary_text import Texts
from baton.core.conversation.undo_held import (
    Inside,
    cut_spans,
    held_inside,
    kept_by_holder,
    kept_inside_of,
)
from baton.core.conversation.undo_place import attachments_in_place, copies_in_place, put_back
from baton.core.conversation.undo_summarized import Summarized, merged

Placed = tuple[Summarized, set[str], dict[str, list[str]], dict[str, list[str]], Inside, list[str]]
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
    summarized, held, spans, _, _, going = placed or placing(view, boundary, others, order, every)
    back = merged(put_back(view, spans, held, summarized), going, summarized.came)
    return attachments_in_place(copies_in_place(back, boundary), view, others)


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
    before a rewound message (that rewind's, keyed by the message), what goes inside
    the summaries a rewind holds (`undo_held.held_inside`) and what goes back into the
    view from a summary a rewind holds, which the rewind kept (`undo_held.kept_by_holder`).
    `texts`: as `undo_compaction`'s."""
    summarized = Summarized([*every, *others, boundary], others, order, texts)
    held = summarized.elsewhere(view)
    rewound = rewound_out(view, others)
    mine = undo_mapping(boundary)
    taker = {m: b.id for b in others if b.direction == "rewind" for m in b.summarized_ids}
    spans, tails = cut_spans(mine, view, rewound, held, taker)
    rewinding = _rewinding(others)  # none in force: nothing is held inside or kept inside
    stands_for = stands_for_of(others) if rewinding else {}
    inside, whole = (
        held_inside(mine, view, others, stands_for, rewound) if rewinding else ({}, set())
    )
    kept_inside = kept_inside_of(mine, view, others, stands_for) if rewinding else {}
    for mid, kept in kept_inside.items():
        cut, rest = cut_spans(mine, view, rewound - kept, held, taker)
        spans[mid] = cut[mid]
        whole.update(one for one in spans[mid] if one in tails)
        tails.update((one, later) for one, later in rest.items() if one in mine[mid])
    tails = {mid: later for mid, later in tails.items() if mid not in whole}
    going = (
        kept_by_holder(view, others, stands_for, spans, rewound | held, summarized.came)
        if rewinding
        else []
    )
    return summarized, held, spans, tails, inside, going


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
    summarized, held, spans, tails, inside, going = placed
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
            skip = present | (held - set(other.summarized_ids)) | set(going)
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
    """Whether a rewind is among `others` (without one, `held_inside` and `kept_inside_of`
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


def stands_for_of(boundaries: Iterable[Boundary]) -> dict[str, list[str]]:
    """What each message the `boundaries` introduced stands for, all in one map."""
    out: dict[str, list[str]] = {}
    for boundary in boundaries:
        out.update(boundary.stands_for)
    return out
