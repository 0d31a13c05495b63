"""Compaction planning: which messages of the view a compaction summarizes and which it keeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from baton.core.compaction.working_set.plan_todos import is_continuity
from baton.core.conversation.boundary import DIRECTIONS, AdjustedPivot, Direction
from baton.core.conversation.invariants import leads_with_compaction, unanswered_tool_uses
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock
from baton.core.errors import InvalidParams, MessageNotFound, NothingToCompact
from baton.core.settings import KeepWindowSettings

# why a compaction of the whole conversation has nothing to summarize, for a front end
# to say what its user may do instead
ALL_KEPT = "the whole conversation fits in the recent window kept verbatim"


@dataclass(frozen=True)
class Plan:
    """What one compaction will do to a view; every list holds ids in view order.

    The summary takes the place of the span's first message: `keep_before`, then the
    summary, then `pinned` (messages inside the span that stay verbatim), then
    `keep_after`. For `all` and `up_to` `keep_before` is empty, so the summary comes first.
    The summary stands for the whole `span`, pinned messages included, so that undoing it
    puts every message back in its old order.
    """

    direction: Direction
    summarize: list[str]
    span: list[str] = field(default_factory=list)  # summarized + pinned: what the summary replaces
    keep_before: list[str] = field(default_factory=list)
    keep_after: list[str] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)
    adjusted_pivot: AdjustedPivot | None = None

    @property
    def kept(self) -> list[str]:
        """Every id not summarized, in view order."""
        return [*self.keep_before, *self.pinned, *self.keep_after]


def safe_cuts(view: Sequence[Message]) -> list[bool]:
    """`out[i]` is True when the view may be cut between message i-1 and message i.

    A cut is unsafe inside a tool_use/tool_result pair, inside a streamed response
    (assistant records sharing an API message id, with tool results between them), and
    after a tool_use still waiting for its result (its result will arrive at the end).
    """
    n = len(view)
    depth = [0] * (n + 2)

    def forbid(first: int, last: int) -> None:  # cuts first+1 .. last are unsafe
        if last > first:
            depth[first + 1] += 1
            depth[last + 1] -= 1

    use_at: dict[str, int] = {}
    span: dict[str, tuple[int, int]] = {}
    for index, message in enumerate(view):  # blocks tested by exact type: see `blocks`
        if message.role == "assistant":
            for block in message.content:
                if type(block) is ToolUseBlock:
                    use_at[block.id] = index
            if message.api_message_id is not None:
                first, _ = span.get(message.api_message_id, (index, index))
                span[message.api_message_id] = (first, index)
            continue
        for block in message.content:
            if type(block) is ToolResultBlock:
                start = use_at.get(block.tool_use_id)
                if start is not None:
                    forbid(start, index)
    for first, last in span.values():
        forbid(first, last)
    for use in unanswered_tool_uses(view):
        if use.id in use_at:
            forbid(use_at[use.id], n)
    out: list[bool] = []
    running = 0
    for index in range(n + 1):
        running += depth[index]
        out.append(running == 0)
    return out


def _nearest(
    safe: list[bool], cut: int, *, prefer: int, empty: Callable[[int], bool]
) -> tuple[int, str]:
    """The safe cut nearest `cut`, and which way it moved ("" when it did not).

    Ties go to `prefer` (+1 later, -1 earlier: the way that keeps the pivot message in the
    span). A cut for which `empty` says the span would hold nothing loses to any other.
    """
    if safe[cut]:
        return cut, ""
    options: list[tuple[bool, int, bool, int, str]] = []
    down = next(i for i in range(cut, -1, -1) if safe[i])  # cut 0 is always safe
    options.append((empty(down), cut - down, prefer != -1, down, "earlier"))
    up = next((i for i in range(cut, len(safe)) if safe[i]), None)
    if up is not None:
        options.append((empty(up), up - cut, prefer != +1, up, "later"))
    best = min(options)
    return best[3], best[4]


def _index(view: Sequence[Message], message_id: str | None, what: str) -> int:
    if not message_id:
        raise InvalidParams(f"this direction needs {what}")
    for index, message in enumerate(view):
        if message.id == message_id:
            return index
    raise MessageNotFound(f"message {message_id!r} is not in the conversation's current view")


def _why(message_id: str, edge: str, word: str) -> str:
    return (
        f"{edge} at {message_id} would split a tool call from its result or a streamed "
        f"response; moved {word} to the nearest safe point"
    )


def _keep_window_start(
    view: Sequence[Message], window: KeepWindowSettings, count: Callable[[Message], int]
) -> int:
    """Index of the first message of the recent window `all` keeps verbatim.

    The window never grows past `max_tokens`: a message that would take it over stays out,
    so a single huge message (a giant tool result) is summarized rather than kept.
    """
    tokens = 0
    texts = 0
    start = len(view)
    for index in range(len(view) - 1, -1, -1):
        message = view[index]
        size = count(message)
        if tokens + size > window.max_tokens:
            break
        tokens += size
        texts += 1 if message.has_text else 0
        start = index
        if tokens >= window.min_tokens and texts >= window.min_text_messages:
            break
    return start


def _token_count(message: Message) -> int:
    return message.tokens


def plan_compaction(
    view: Sequence[Message],
    direction: str,
    pivot_id: str | None = None,
    end_id: str | None = None,
    *,
    keep_window: KeepWindowSettings,
    count: Callable[[Message], int] = _token_count,
) -> Plan:
    """Decide what a compaction in `direction` summarizes; raise when there is nothing to do.

    `count` gives a message's tokens for the keep window (default: its stored count).
    """
    if direction not in DIRECTIONS:
        raise InvalidParams(f"unknown direction {direction!r}; use one of {', '.join(DIRECTIONS)}")
    if direction == "all" and (pivot_id or end_id):
        raise InvalidParams("direction 'all' takes no pivotMessageId or endMessageId")
    if direction in ("up_to", "from") and end_id:
        raise InvalidParams(f"direction {direction!r} takes no endMessageId")
    if not view:
        raise NothingToCompact("the conversation is empty")
    safe = safe_cuts(view)
    pivot = last = -1
    start_word = end_word = ""
    if direction == "all":
        start = 0
        end = max(i for i in range(_keep_window_start(view, keep_window, count) + 1) if safe[i])
        if end == 0:
            raise NothingToCompact(ALL_KEPT)
    elif direction == "up_to":
        pivot = last = _index(view, pivot_id, "pivotMessageId")
        start = 0
        end, end_word = _nearest(safe, pivot + 1, prefer=+1, empty=lambda c: c <= 0)
    elif direction == "from":
        pivot = _index(view, pivot_id, "pivotMessageId")
        # a tool call still waiting for its result stays after the summary, verbatim
        end = max(i for i in range(len(view) + 1) if safe[i])
        start, start_word = _nearest(safe, pivot, prefer=-1, empty=lambda c: c >= end)
    else:
        pivot = _index(view, pivot_id, "pivotMessageId")
        last = _index(view, end_id, "endMessageId")
        if last < pivot:
            raise InvalidParams("endMessageId comes before pivotMessageId in the conversation")
        start, start_word = _nearest(safe, pivot, prefer=-1, empty=lambda c: c > last)
        end, end_word = _nearest(safe, last + 1, prefer=+1, empty=lambda c: c <= start)
    if end <= start:
        raise NothingToCompact("nothing left to summarize once tool calls are kept whole")
    if end < len(view) and is_continuity(view[end]) and safe[end + 1]:
        # the task list an earlier summary at the span's end brought back goes with it: a
        # fresh one follows the new summary, and the stale one must not come after it
        end += 1
    pinned = _pinned(view, safe, start, end)
    summarize = [view[i].id for i in range(start, end) if i not in pinned]
    if not summarize:
        raise NothingToCompact("every message in the span is pinned")
    return Plan(
        direction=direction,
        summarize=summarize,
        span=[m.id for m in view[start:end]],
        keep_before=[m.id for m in view[:start]],
        keep_after=[m.id for m in view[end:]],
        pinned=[view[i].id for i in sorted(pinned)],
        adjusted_pivot=_adjustment(view, pivot, last, start, end, start_word, end_word),
    )


def _adjustment(
    view: Sequence[Message],
    pivot: int,
    last: int,
    start: int,
    end: int,
    start_word: str,
    end_word: str,
) -> AdjustedPivot | None:
    """How the requested cut(s) moved; `pivot`/`last` index the requested span ends."""
    if start_word:
        why = _why(view[pivot].id, "a cut before", start_word)
        if end_word:
            why += f"; the span end {view[last].id} moved {end_word} to {view[end - 1].id}"
        return AdjustedPivot(requested=view[pivot].id, used=view[start].id, why=why)
    if end_word:
        requested = view[last].id
        return AdjustedPivot(
            requested=requested, used=view[end - 1].id, why=_why(requested, "a cut after", end_word)
        )
    return None


def _pinned(view: Sequence[Message], safe: list[bool], start: int, end: int) -> set[int]:
    """Indices inside [start, end) that stay verbatim: each pinned message together with
    the tool calls, results and response records it cannot be separated from. Not a
    summary the API wrote, pinned or not: its block must come first in a request, and the
    new summary goes before what the span keeps, so the span's summary takes it in."""
    keep: set[int] = set()
    for index in range(start, end):
        if not view[index].pinned or index in keep or leads_with_compaction(view[index]):
            continue
        low = max(i for i in range(index + 1) if safe[i])
        high = min(i for i in range(index + 1, len(safe)) if safe[i])
        keep.update(range(low, high))
    return keep
