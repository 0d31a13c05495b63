"""The summary's user-messages section: every prompt in order, cut to a common length to fit."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from baton.core.compaction.cuts import (
    CountText,
    cap_above,
    common_cap,
    count_made_within,
    cut_with_marker,
    first_and_last,
    head_of,
    kept_chars,
)

# A prompt is cut to no less than this (its first words and the cut marker); below it,
# the prompts section lists the first and the latest prompts and says how many it left out.
PROMPT_FLOOR_TOKENS = 24


def indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def bullet(text: str) -> str:
    """`text` as one item of a list: continuation lines are indented so it parses back so."""
    return "- " + indent(text)


def visible_sizes(prompts: Sequence[str], keep_chars: int, count: CountText) -> list[int]:
    """Each prompt's size as an item of the section when it is cut to its first
    `keep_chars` characters (whole when shorter): what keeps every prompt visible."""
    return [_head_item_tokens(p, keep_chars, count) + 1 for p in prompts]


def _head_item_tokens(prompt: str, keep_chars: int, count: CountText) -> int:
    """The tokens of the prompt's item cut to its first `keep_chars` characters; a prompt
    no longer than that is its whole item, counted as `prompts_section` counts it (once,
    remembered by the prompt)."""
    head = head_of(prompt, keep_chars)
    if head is prompt:
        return count_made_within(prompt, bullet, sys.maxsize, count)
    return count(bullet(head))


def visible_need(prompts: Sequence[str], keep_chars: int, count: CountText, cap: int) -> int:
    """The sum of `visible_sizes`, or a figure above `cap` once the sum passes it (the
    prompts after that are not counted)."""
    total = 0
    for prompt in prompts:
        total += _head_item_tokens(prompt, keep_chars, count) + 1
        if total > cap:
            break
    return total


def prompts_section(
    prompts: Sequence[str], budget: int, count: CountText, keep_chars: int | None = None
) -> str:
    """Every prompt in order, verbatim; when they do not fit, the longest are cut to a
    common length (the largest one that fits), so short prompts stay whole, and none
    below its first `keep_chars` characters when those fit (`_visible`); when that
    length would be under PROMPT_FLOOR_TOKENS (a cut marker alone is about half of it),
    see `_first_and_latest`."""
    if not prompts:
        return "- None."
    if budget <= 0:
        return f"- [... {len(prompts)} user messages cut: no room left in the summary ...]"
    # Each prompt's list item is made to be counted and let go, and again for the text
    # if it is kept whole: an item is a copy of its prompt (a prompt may be a pasted log).
    # Sizes up to the floor first (exact there, above it otherwise): when the prompts at
    # the floor do not fit, that is all the section needs, and long prompts are not counted.
    floor = PROMPT_FLOOR_TOKENS
    sizes = [count_made_within(p, bullet, floor - 1, count) + 1 for p in prompts]
    if sum(min(size, floor) for size in sizes) > budget:
        return _first_and_latest(prompts, sizes, budget, count)
    # Exact up to the budget: a prompt past it (a pasted log) is cut whichever figure
    # above the budget it has (every cap worked out below is within the budget), so it
    # is not counted whole.
    sizes = [
        size if size <= floor else count_made_within(p, bullet, budget, count) + 1
        for p, size in zip(prompts, sizes, strict=True)
    ]
    if sum(sizes) <= budget:
        return "\n".join([bullet(p) for p in prompts])
    if keep_chars is not None:
        visible = _visible(prompts, sizes, budget, count, keep_chars)
        if visible is not None:
            return visible
    # The largest common length that fits: at least the floor (never None: the prompts
    # fit at the floor, checked above).
    low = common_cap(sizes, budget, floor) or floor
    return "\n".join(
        bullet(p if size <= low else cut_with_marker(p, max(low - 2, 0), count))
        for p, size in zip(prompts, sizes, strict=True)
    )


def _first_and_latest(
    prompts: Sequence[str], sizes: Sequence[int], budget: int, count: CountText
) -> str:
    """Too many prompts for each to keep its first words: the first and the latest ones,
    each cut to PROMPT_FLOOR_TOKENS, under a line that says how many are left out. The line
    is no bullet: a later compaction reads this section's bullets back as prompts. `sizes`
    are the items' sizes where they are at most the floor, above it elsewhere."""

    def note(left: int) -> str:
        return (
            f"{left:,} of {len(prompts):,} user messages left out for lack of room"
            " (the first and the latest are listed):"
        )

    floors = [min(size, PROMPT_FLOOR_TOKENS) for size in sizes]
    chosen = first_and_last(floors, budget - count(note(len(prompts))) - 1)
    items = [
        bullet(prompts[i])
        if sizes[i] <= PROMPT_FLOOR_TOKENS
        else bullet(cut_with_marker(prompts[i], PROMPT_FLOOR_TOKENS - 2, count))
        for i in chosen
    ]
    return "\n".join([note(len(prompts) - len(chosen)), *items])


def _visible(
    prompts: Sequence[str], sizes: Sequence[int], budget: int, count: CountText, keep_chars: int
) -> str | None:
    """Every prompt cut to a common length, but none below its first `keep_chars`
    characters; None when those heads do not fit in `budget`."""
    heads = visible_sizes(prompts, keep_chars, count)
    floors = [min(size, head) for size, head in zip(sizes, heads, strict=True)]
    if sum(floors) > budget:
        return None
    cap = cap_above(sizes, floors, budget)
    items: list[str] = []
    for prompt, size, floor in zip(prompts, sizes, floors, strict=True):
        if size <= cap:
            items.append(bullet(prompt))
            continue
        head = head_of(prompt, keep_chars)
        cut = cut_with_marker(prompt, max(cap - 2, 0), count) if cap > floor else head
        items.append(bullet(cut if kept_chars(cut) >= kept_chars(head) else head))
    return "\n".join(items)
