"""Writing the fact ledger: the facts a summary missed, fitted into the ledger's token budget."""

from __future__ import annotations

from collections.abc import Sequence

from baton.core.compaction.cuts import (
    CountText,
    cap_above,
    common_cap,
    count_within,
    counted_once,
    cut_with_marker,
    first_and_last,
    head_of,
    kept_chars,
    remembered,
)

LEDGER_PROMPT_CHARS = 500
# A long prompt survives when its head does (summaries may cut the tail with a marker):
# the retention check compares this many characters, and a shortened ledger keeps them.
PROMPT_PREFIX_CHARS = 200
# The ledger's own bound, on top of the summarizer's: what a compaction writes stays within
# the summarizer's bound plus this (6,000 + 4,000 tokens with the extractive summarizer,
# whose bound grows to 20,000 when that keeps every user message visible).
# A fixed cap, not "the room the summary left": summarizers fill their bound exactly when
# the facts are many, which is when a ledger is needed most.
LEFT_OUT = "Left out for lack of room"
LEDGER_MAX_TOKENS = 4_000
# A shortened ledger cuts no prompt below this (its first words and the cut marker), and
# cuts error lines to this.
PROMPT_FLOOR_TOKENS = 24
# How many tokens joining one more bullet to a list can save at most, with room to spare.
JOIN_SLACK_TOKENS = 3
ERROR_SHORT_TOKENS = 24
# When even that does not fit, the room is shared out in these parts (prompts, paths,
# errors); what one kind does not need goes to the others.
SHARES = (0.6, 0.25, 0.15)
LEDGER_HEADING = (
    "Fact ledger: details of the summarized messages that the summary above does not carry."
)
PROMPTS_TITLE = "### User messages (verbatim, long ones cut)"
PATHS_TITLE = "### Files touched"
ERRORS_TITLE = "### Errors seen"
STANDING_TITLE = "### Standing instructions (verbatim)"


def _ledger_prompt(prompt: str) -> str:
    """The prompt's head, at least LEDGER_PROMPT_CHARS characters once whitespace is
    normalized (so the ledger always carries the part the check compares)."""
    return head_of(prompt, LEDGER_PROMPT_CHARS)


def _bullets(items: Sequence[str]) -> str:
    # Continuation lines are indented so the list reads (and parses) as one item per fact.
    return "\n".join("- " + item.replace("\n", "\n  ") for item in items)


def _render(note: str | None, sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    # The note sits above the first heading: a later compaction reads the bullets under
    # "User messages" back as prompts, so nothing else may go there.
    parts = [LEDGER_HEADING if note is None else f"{LEDGER_HEADING}\n{note}"]
    parts.extend(f"{title}\n{_bullets(items)}" for title, items in sections if items)
    return "\n\n".join(parts)


def write_ledger(
    prompts: list[str],
    paths: list[str],
    errors: list[str],
    budget: int,
    count: CountText,
    transcript_path: str | None,
) -> str:
    """The ledger of the missing facts, within `budget` tokens as `count` counts them."""
    facts = (prompts, paths, errors)
    return _Fitter(facts, budget, remembered(count), transcript_path).fit()


class _Fitter:
    """Fits the ledger of the facts the summary missed into `budget` tokens, trying in turn:

    1. the full ledger (prompts up to 500 characters), unchanged when it fits;
    2. paths written relative to their common folder, and every prompt cut to a common
       length, the largest that fits (short ones stay whole), at least PROMPT_FLOOR_TOKENS;
    3. the same with error lines cut too;
    4. prompts at the floor, the room shared out by SHARES, and of each kind the first and
       last items that fit: the middle is left out.

    A shortened ledger says so above its lists: how many of each kind it left out, and
    where the full text is. If not even that note fits, the note alone is written (facts
    are never dropped silently, so a tiny budget may be exceeded).
    """

    def __init__(
        self,
        facts: tuple[list[str], list[str], list[str]],
        budget: int,
        count: CountText,
        transcript_path: str | None,
    ) -> None:
        prompts, paths, errors = facts
        self.prompts, self.errors, self.budget, self.count = prompts, errors, budget, count
        self.totals = (len(prompts), len(paths), len(errors))
        self.where = transcript_path or "the session's transcript file"
        self.long_prompts = [_ledger_prompt(p) for p in prompts]
        self.full = _render(
            None,
            [(PROMPTS_TITLE, self.long_prompts), (PATHS_TITLE, paths), (ERRORS_TITLE, errors)],
        )
        folder = _common_folder(paths)
        self.paths_title = f"{PATHS_TITLE} (under {folder})" if folder else PATHS_TITLE
        self.paths = [p[len(folder) :] for p in paths]  # no information lost: see the title
        self.sizes: list[int] = []
        self.exact = False  # whether every size is exact (`_exact_sizes`)
        self.floors: list[int] | None = None  # each prompt's size cut to its compared head

    def fit(self) -> str:
        # Sizes up to the floor first (exact there, above it otherwise, see `_exact_sizes`).
        floor = PROMPT_FLOOR_TOKENS
        self.sizes = [
            count_within(_bullets([p]), floor - 1, self.count) + 1 for p in self.long_prompts
        ]
        # Counted one by one, the prompts alone may show the full ledger far over budget
        # (joining them changes a count by a token or two each): then it is not counted
        # whole, which at a million tokens is one encoding of hundreds of kilobytes.
        far_over = self._far_over()
        if not far_over:
            self._exact_sizes()
            far_over = self._far_over()
        if not far_over and self.count(self.full) <= self.budget:
            return self.full
        short = [cut_with_marker(e, ERROR_SHORT_TOKENS, self.count) for e in self.errors]
        for errors in (self.errors, short):
            text = self._cut_prompts(errors)
            if text is not None:
                return text
        return self._leave_out(short)

    def _far_over(self) -> bool:
        return sum(self.sizes) - JOIN_SLACK_TOKENS * len(self.sizes) > self.budget

    def _exact_sizes(self) -> None:
        """Every prompt's exact size, where so far only those up to the floor were exact:
        sizes above it are lower bounds, enough to decide what needs no more (a ledger far
        over budget, prompts at the floor that do not fit, which ones the floor cuts)."""
        if self.exact:
            return
        floor = PROMPT_FLOOR_TOKENS
        self.sizes = [
            size if size <= floor else self.count(_bullets([p])) + 1
            for p, size in zip(self.long_prompts, self.sizes, strict=True)
        ]
        self.exact = True

    def _note(self, left: Sequence[int], shortened: int = 0) -> str:
        kinds = ("user messages", "file paths", "error lines")
        gone = [
            f"{n:,} of {total:,} {kind}"
            for n, total, kind in zip(left, self.totals, kinds, strict=True)
            if n
        ]
        text = f"Shortened to fit {self.budget:,} tokens: long entries are cut"
        if shortened:
            text += f" ({shortened:,} of {self.totals[0]:,} user messages)"
        text += "."
        if gone:
            text += f" {LEFT_OUT}: {', '.join(gone)}."
        return f"{text} The full text of every message is in {self.where}."

    def _cut_to(self, index: int, cap: int) -> str:
        if self.sizes[index] <= cap:
            return self.long_prompts[index]
        return cut_with_marker(self.prompts[index], max(cap - 2, 0), self.count)

    def _head_floors(self) -> list[int]:
        """Each prompt's size once cut to its first PROMPT_PREFIX_CHARS characters (the part
        the retention check compares), or whole when that is smaller."""
        if self.floors is None:
            heads = [_bullets([head_of(p, PROMPT_PREFIX_CHARS)]) for p in self.prompts]
            self.floors = [
                min(size, self.count(head) + 1)
                for size, head in zip(self.sizes, heads, strict=True)
            ]
        return self.floors

    def _cut_above(self, index: int, cap: int) -> str:
        """The prompt cut to `cap`, but never shorter than its compared head."""
        if self.sizes[index] <= cap:
            return self.long_prompts[index]
        head = head_of(self.prompts[index], PROMPT_PREFIX_CHARS)
        cut = self._cut_to(index, cap)
        return cut if kept_chars(cut) >= kept_chars(head) else head

    def _cut_prompts(self, errors: list[str]) -> str | None:
        """Stages 2 and 3: every prompt listed, cut to the largest common length that fits."""
        after = [(self.paths_title, self.paths), (ERRORS_TITLE, errors)]
        note = self._note((0, 0, 0), len(self.prompts))  # the longest it can be
        room = self.budget - self.count(_render(note, after)) - self.count(PROMPTS_TITLE) - 2
        for _ in range(8):  # token counts do not quite add up: measure, then tighten
            if sum(min(size, PROMPT_FLOOR_TOKENS) for size in self.sizes) > room:
                return None  # not even at the floor: what `common_cap` would say
            self._exact_sizes()
            floors = self._head_floors()
            if sum(floors) <= room:  # every prompt keeps at least its compared head
                cap = cap_above(self.sizes, floors, room)
                items = [self._cut_above(i, cap) for i in range(len(self.sizes))]
            else:
                found = common_cap(self.sizes, room, PROMPT_FLOOR_TOKENS)
                if found is None:
                    return None
                cap = found
                items = [self._cut_to(i, cap) for i in range(len(self.sizes))]
            shortened = sum(1 for size in self.sizes if size > cap)
            text = _render(self._note((0, 0, 0), shortened), [(PROMPTS_TITLE, items), *after])
            over = counted_once(self.count)(text) - self.budget  # a draft, counted once
            if over <= 0:
                return text
            room -= over + 2
        return None

    def _leave_out(self, errors: list[str]) -> str:
        """Stage 4: what fits of each kind, the rest counted in the note."""
        kinds = [
            [min(size, PROMPT_FLOOR_TOKENS) for size in self.sizes],
            [self.count(_bullets([p])) + 1 for p in self.paths],
            [self.count(_bullets([e])) + 1 for e in errors],
        ]
        worst = _render(self._note(self.totals), [])
        titles = f"{PROMPTS_TITLE}\n\n{self.paths_title}\n\n{ERRORS_TITLE}"
        room = self.budget - self.count(worst) - self.count(titles) - 6
        for _ in range(8):
            if room <= 0:
                break
            shares = _share([sum(sizes) for sizes in kinds], room, SHARES)
            chosen = [
                first_and_last(sizes, share) for sizes, share in zip(kinds, shares, strict=True)
            ]
            left = [total - len(picked) for total, picked in zip(self.totals, chosen, strict=True)]
            sections = [
                (PROMPTS_TITLE, [self._cut_to(i, PROMPT_FLOOR_TOKENS) for i in chosen[0]]),
                (self.paths_title, [self.paths[i] for i in chosen[1]]),
                (ERRORS_TITLE, [errors[i] for i in chosen[2]]),
            ]
            shortened = sum(1 for i in chosen[0] if self.sizes[i] > PROMPT_FLOOR_TOKENS)
            text = _render(self._note(left, shortened), sections)
            over = counted_once(self.count)(text) - self.budget  # a draft, counted once
            if over <= 0:
                return text
            room -= over + 2
        return worst


def _share(needs: Sequence[int], room: int, weights: Sequence[float]) -> list[int]:
    """`room` split by `weights`; a kind that needs less than its part gets what it needs
    and the rest is split again among the others."""
    given = [0] * len(needs)
    open_kinds = [i for i, need in enumerate(needs) if need > 0]
    left = room
    while open_kinds:
        weight = sum(weights[i] for i in open_kinds)
        settled = [i for i in open_kinds if needs[i] <= left * weights[i] / weight]
        if not settled:
            for i in open_kinds:
                given[i] = int(left * weights[i] / weight)
            break
        for i in settled:
            given[i] = needs[i]
            left -= needs[i]
            open_kinds.remove(i)
    return given


def _common_folder(paths: Sequence[str]) -> str:
    """The folder every path lies under (ending in its separator), or "" if none is shared."""
    if len(paths) < 2:
        return ""
    # The sorted first and last differ earliest; what they share, every path shares.
    low, high = min(paths), max(paths)
    pairs = zip(low, high, strict=False)
    shared = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(low), len(high)))
    prefix = low[:shared]
    cut = max(prefix.rfind("/"), prefix.rfind("\\"))
    if cut <= 0 or any(len(p) == cut + 1 for p in paths):
        return ""  # no shared folder, or a path that is the folder itself
    return prefix[: cut + 1]
