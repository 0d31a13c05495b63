"""Token-bounded cuts of text, and the remembered counts that fitting a summary or ledger uses."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from baton.core.compaction import slices
from baton.core.usage.estimator import Estimator

CountText = Callable[[str], int]

# No token covers more than a few dozen characters, so this bounds a cut's search cheaply.
MAX_CHARS_PER_TOKEN = 24


@dataclass
class Known:
    """What a counting function's `remembered` counters learnt: exact counts, and figures
    that the counts of other texts are known to reach (`Remembered.at_most`)."""

    counts: dict[str, int] = field(default_factory=dict)
    bounds: dict[str, int] = field(default_factory=dict)
    # the same for texts made from another one (`Remembered.at_most_made`), by that one
    made: dict[tuple[Callable[[str], str], str], int] = field(default_factory=dict)
    made_bounds: dict[tuple[Callable[[str], str], str], int] = field(default_factory=dict)


# The answers of `remembered` counters, per counting function.
SharedCounts = dict[CountText, Known]
# Those of the `counts_shared()` block the code runs in, if any.
_shared: ContextVar[SharedCounts | None] = ContextVar("baton_shared_counts", default=None)


def approx_tokens(text: str) -> int:
    """The estimator's own fallback: about four characters per token."""
    return math.ceil(len(text) / 4)


@contextmanager
def counts_shared(counts: SharedCounts | None = None) -> Iterator[SharedCounts]:
    """Within this block, `remembered` counters over the same function share their answers
    (those in `counts`, when given: a block entered again later goes on from them): a
    compaction's summary and its ledger count many of the same prompts."""
    counts = {} if counts is None else counts
    token = _shared.set(counts)
    try:
        yield counts
    finally:
        _shared.reset(token)


class Remembered:
    """`count_text` remembering its answers (see `remembered`)."""

    def __init__(self, count_text: CountText, known: Known) -> None:
        self.count_text = count_text
        self.known = known.counts
        self.bounds = known.bounds  # text -> a figure above a cap that its count reaches
        self.made, self.made_bounds = known.made, known.made_bounds
        self.capped = capped_counter(count_text)

    def __call__(self, text: str) -> int:
        tokens = self.known.get(text)
        if tokens is None:
            tokens = self.known[text] = self.count_text(text)
        return tokens

    def at_most(self, text: str, cap: int) -> int:
        """The count of `text` when it is at most `cap`, else a figure above `cap` (no more
        than the count): with an estimator's counter a long text is not counted whole to
        learn that it does not fit."""
        tokens = self.known.get(text)
        if tokens is not None:
            return tokens
        if self.capped is None:
            return self(text)
        bound = self.bounds.get(text, 0)
        if bound > cap:
            return bound
        tokens = self.capped(text, cap)
        if tokens <= cap:
            self.known[text] = tokens
        else:
            self.bounds[text] = tokens
        return tokens

    def at_most_made(self, source: str, make: Callable[[str], str], cap: int) -> int:
        """`at_most(make(source), cap)`, remembered by `source`: the text made is counted
        and let go, never held as a key (a prompt's list item, a copy of a prompt that may
        be a pasted log, while the prompt itself is held anyway)."""
        key = (make, source)
        tokens = self.made.get(key)
        if tokens is not None:
            return tokens
        bound = self.made_bounds.get(key, 0)
        if bound > cap:
            return bound
        text = make(source)
        tokens = self.capped(text, cap) if self.capped is not None else self.count_text(text)
        if tokens <= cap or self.capped is None:
            self.made[key] = tokens
        else:
            self.made_bounds[key] = tokens
        return tokens


def capped_counter(count_text: CountText) -> Callable[[str, int], int] | None:
    """An estimator's `count_capped` when `count_text` is that estimator's own `count_text`
    (another counter, even one counting the same way, is never assumed to split so)."""
    owner = getattr(count_text, "__self__", None)
    if isinstance(owner, Estimator) and getattr(count_text, "__func__", None) is (
        Estimator.count_text
    ):
        return owner.count_capped
    return None


def remembered(count_text: CountText) -> Remembered:
    """`count_text` remembering its answers: one summary or ledger counts the same prompts,
    markers and candidate cuts again and again while it fits its budget. Keep the result
    for one such piece of work only (it holds every text it counted)."""
    scope = _shared.get()
    known = Known() if scope is None else scope.setdefault(count_text, Known())
    return Remembered(count_text, known)


def counted_once(count_text: CountText) -> CountText:
    """The counter under a `remembered` one, for a text counted once and never again (a
    draft of a whole summary, a guess at a cut): remembered, it would be held for the rest
    of the work, with every other such text, for nothing."""
    return count_text.count_text if isinstance(count_text, Remembered) else count_text


def count_within(text: str, cap: int, count_text: CountText) -> int:
    """`count_text(text)` when that is at most `cap`, else a figure above `cap`: what
    deciding whether a text fits needs. Only a `remembered` counter over an estimator
    learns that without counting a long text whole; any other counter counts it."""
    if isinstance(count_text, Remembered):
        return count_text.at_most(text, cap)
    return count_text(text)


def count_made_within(
    source: str, make: Callable[[str], str], cap: int, count_text: CountText
) -> int:
    """`count_within(make(source), cap, count_text)`; a `remembered` counter remembers it
    by `source`, so the text made (a copy of `source`, whatever its length) is let go once
    counted."""
    if isinstance(count_text, Remembered):
        return count_text.at_most_made(source, make, cap)
    return count_text(make(source))


def longest_head(text: str, max_tokens: int, count_text: CountText) -> int:
    """The length of the longest prefix of `text` (up to MAX_CHARS_PER_TOKEN characters a
    token) that `count_text` counts within `max_tokens`.

    A bracketed search that guesses from the token density between its ends, falling back to
    halving when a guess barely narrows it: the same prefix a binary search finds when counts
    grow with length, in a handful of counts instead of one per halving. The prefix returned
    always fits, whatever the counts do."""
    if max_tokens <= 0:
        return 0
    low, high = 0, min(len(text), max_tokens * MAX_CHARS_PER_TOKEN)
    guessed = counted_once(count_text)  # each guess is a prefix of its own
    low_count, high_count = 0, (count_text if high == len(text) else guessed)(text[:high])
    if high_count <= max_tokens:
        return high
    interpolate = True
    while high - low > 1:  # text[:low] fits, text[:high] does not
        if interpolate:
            share = (max_tokens + 0.5 - low_count) / max(high_count - low_count, 1)
            guess = low + int((high - low) * share)
        else:
            guess = (low + high) // 2
        guess = min(max(guess, low + 1), high - 1)
        tokens = guessed(text[:guess])
        width = high - low
        if tokens <= max_tokens:
            low, low_count = guess, tokens
        else:
            high, high_count = guess, tokens
        interpolate = not interpolate or (high - low) * 2 <= width
    return low


def cut_to_tokens(text: str, max_tokens: int, count_text: CountText) -> str:
    """The longest prefix of `text` within `max_tokens`, ending at a line break or a space
    when one is near the end; the whole text when it fits."""
    if max_tokens <= 0:
        return ""
    if count_within(text, max_tokens, count_text) <= max_tokens:
        return text
    low = longest_head(text, max_tokens, count_text)
    head = text[:low]
    # Prefer ending at a line break, else between words, when one is near the end.
    for separator, share in (("\n", 0.8), (" ", 0.9)):
        position = head.rfind(separator)
        if position >= low * share and position > 0:
            return head[:position]
    return head


def cut_with_marker(text: str, max_tokens: int, count_text: CountText) -> str:
    """`text` within `max_tokens`, its head kept and a visible marker saying how much was cut."""
    if count_within(text, max_tokens, count_text) <= max_tokens:
        return text
    marker_room = count_text(f" [... {len(text)} characters cut ...]") + 1
    head = cut_to_tokens(text, max(max_tokens - marker_room, 0), count_text).rstrip()
    return f"{head} [... {len(text) - len(head)} characters cut ...]"


def head_of(text: str, chars: int) -> str:
    """`text` cut after its first `chars` characters as whitespace-normalized text counts
    them (at least that many are kept), with a visible marker; whole when not longer. A
    check that compares a text's first `chars` normalized characters finds it in the cut."""
    if len(text) <= chars:
        return text
    wanted = min(chars, _normalized_length(text, chars))
    end = chars
    while end < len(text) and len(" ".join(text[:end].split())) < wanted:
        end += max(wanted - len(" ".join(text[:end].split())), 1)
    if end >= len(text):
        return text
    return f"{text[:end]} [... {len(text) - end} characters cut ...]"


def _normalized_length(text: str, at_least: int) -> int:
    """`len(slices.normalize(text))`, or any figure from `at_least` up to it when it is
    that long: a growing head is normalized until it reaches `at_least` (a head's
    normalized length is never more than the text's), so a 20 MB text is not normalized
    whole to learn that it runs past a few thousand characters."""
    head = 2 * at_least + 64
    while head < len(text):
        length = len(slices.normalize(text[:head]))
        if length >= at_least:
            return length
        head *= 4
    return len(slices.normalize(text))


def first_and_last(sizes: Sequence[int], room: int) -> list[int]:
    """Indices of the items kept within `room`, taken alternately from the start and the
    end (the first requests and the latest matter most), in their original order."""
    count = len(sizes)
    order = [i for pair in zip(range(count), reversed(range(count)), strict=True) for i in pair][
        :count
    ]
    chosen: list[int] = []
    for index in order:
        if sizes[index] > room:
            break
        chosen.append(index)
        room -= sizes[index]
    return sorted(chosen)


def common_cap(sizes: Sequence[int], room: int, floor: int) -> int | None:
    """The largest per-item cap (at least `floor`) under which the items fit in `room`."""
    if sum(min(size, floor) for size in sizes) > room:
        return None
    low, high = floor, max([*sizes, floor])
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(size, middle) for size in sizes) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def cap_above(sizes: Sequence[int], floors: Sequence[int], room: int) -> int:
    """The largest common cap under which the items fit in `room` when none goes below its
    own floor (each item takes max(floor, min(size, cap))); the floors must fit."""
    low, high = 0, max([*sizes, 0])
    while low < high:
        middle = (low + high + 1) // 2
        used = sum(max(f, min(s, middle)) for s, f in zip(sizes, floors, strict=True))
        if used <= room:
            low = middle
        else:
            high = middle - 1
    return low


def kept_chars(cut: str) -> int:
    """How many characters of its text a cut (`cut_with_marker`, `head_of`) kept."""
    head, marker, _ = cut.rpartition(" [... ")
    return len(head) if marker else len(cut)
