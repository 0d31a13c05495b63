"""Which stored thinking a request leaves out, so that an estimate counts what is sent.

A reply's thinking goes back to the model only while everything before its turn is what
it was when the reply was generated (`model_api/reply_request.py` checks the payload's
fingerprint); otherwise the turn goes without it. So a request leaves out the thinking of
a turn whose view before it changed since it arrived (a compaction, an undo or a rewind
before it, or a compaction that committed while it streamed) and of every record of a
turn but its first (only the first record's prefix is known), but never of the turn in
progress (the last assistant turn, followed only by the tool results that answer it) in
a request that continues it, which sends it back as it was received; a new prompt
closes that turn, and the request it starts treats the turn as any other. Thinking that
ends a reply (its output ran out while it thought) never goes: the API refuses an
assistant message whose last block is thinking, and the payload leaves it out
(`model_api/api_messages.api_turns`); a reply holding thinking before its last block too
is counted out whole. The meter estimates that request. The stored counts hold every
thinking block: the meter, the figures a compaction reports and the usage a reply
teaches take this thinking out.

An imported turn has no fingerprint, so Baton's own requests leave its thinking out too;
it is still counted here, as the client that wrote the file sent it, while the view before
it is the one it came after: the meter of an imported session follows that client's
recorded usage until Baton's first reply anchors it. Once that view changed (a compaction,
an undo or a rewind before it) no request sends it, the file's client's no more than
Baton's, and it is left out as any other turn's is.
Where every request is Baton's own (a session's `own_requests`: `baton acp`'s, its
service made so), it is left out as the request leaves it.
"""

from __future__ import annotations

from collections.abc import Callable

from baton.core.conversation.messages import MOVED_PREFIX, Message, TextBlock, ThinkingBlock

THINKING_TYPES = ("thinking", "redacted_thinking")
# a reply whose request sent back the turn in progress after its prefix changed (a
# compaction in the middle of a tool loop) records its fingerprint behind this mark: that
# thinking goes out of every later request, so no request matches its prefix again
STALE_PREFIX = "stale:"
At = Callable[[int], Message]  # the view's message at an index


def has_thinking(message: Message) -> bool:
    thinks = False
    if message.role == "assistant":
        for block in message.content:  # a loop, not any() over a generator: a load asks it
            if block.type in THINKING_TYPES:  # of every message it replays
                thinks = True
                break
    return thinks


def thinking_left_out(
    at: At,
    start: int,
    stop: int,
    unchanged: Callable[[int], bool],
    *,
    continued: bool = True,
    own: bool = False,
) -> list[int]:
    """The indices in [start, stop) of the messages whose thinking a request for the view
    up to `stop` leaves out (`at(i)`: the view's message i); `unchanged(i)`: whether the
    view before message i is the one it arrived after. Looks no further back than the
    prompt before `start`. `continued`: the request continues the turn in progress (a tool
    loop's next step); a request that a new prompt starts (what the meter estimates) has
    no turn in progress: the prompt joins the results' turn and closes the loop. `own`:
    every request of the session is Baton's own (`Replayed.own_requests`): an imported
    turn's thinking is left out as the request leaves it, not counted as its client sent it
    (which it is otherwise only while `unchanged`)."""
    low = start
    while low > 0 and not _typed(at(low - 1)):
        low -= 1  # back to a typed prompt (or the start): no turn spans it
    firsts = _turn_starts(at, low, stop)
    in_progress = _in_progress_start(at, low, stop, firsts) if continued else stop
    out = []
    for index in range(start, min(stop, in_progress)):
        message = at(index)
        if not has_thinking(message):
            continue
        if message.prefix_hash is None:
            if own or not unchanged(index):  # Baton's request leaves it out (no fingerprint)
                out.append(index)
            continue  # imported, its view before it as it was: counted as its client sent it
        changed = index not in firsts or not unchanged(index) or is_stale(message)
        if changed or ends_in_thinking(message):
            out.append(index)
    return out


def ends_in_thinking(message: Message) -> bool:
    """Whether the last block a request sends of `message` is thinking (blank text and
    unsigned thinking are never sent)."""
    for block in reversed(message.content):
        if isinstance(block, TextBlock) and not block.text.strip():
            continue
        if isinstance(block, ThinkingBlock) and not block.signature:
            continue
        return block.type in THINKING_TYPES
    return False


def is_stale(message: Message) -> bool:
    """Whether no request matches the prefix `message` was made on any more: a reply on a
    turn in progress sent back after its prefix changed, or one that streamed while a
    compaction committed (its request sent the view before it; `MOVED_PREFIX`)."""
    return (message.prefix_hash or "").startswith((STALE_PREFIX, MOVED_PREFIX))


def turn_low(at: At, index: int) -> int:
    """The index just after the typed prompt before view[index] (0 if none)."""
    low = index
    while low > 0 and not _typed(at(low - 1)):
        low -= 1
    return low


def thinking_dropped(
    at: At,
    anchor: int,
    stop: int,
    unchanged: Callable[[int], bool],
    *,
    continued: bool,
    own: bool = False,
) -> list[int]:
    """The indices in the anchoring reply's turn, up to view[anchor] (the reply's first
    record), whose thinking its usage holds (its request sent it, or it made it) but a
    request for the view up to `stop` leaves out: a turn in progress that its request sent
    back after its prefix changed, and a reply made on top of one. Its request's view is
    the view before `anchor` as it is now (the anchor holds only while that is so)."""
    low = turn_low(at, anchor)
    then = set(thinking_left_out(at, low, anchor, unchanged, own=own))
    now = thinking_left_out(at, low, stop, unchanged, continued=continued, own=own)
    return [i for i in now if i <= anchor and i not in then]


def _typed(message: Message) -> bool:
    return message.role == "user" and not message.is_tool_result_only


def _turn_starts(at: At, low: int, stop: int) -> set[int]:
    """The indices in [low, stop) of the assistant records that start an API turn (the
    records of one response, with tool results between them, are one turn, and so are
    consecutive assistant records); view[low - 1], if any, is a typed prompt."""
    starts: set[int] = set()
    open_response: str | None = None  # the last response's id, while only results follow
    previous = ""
    for index in range(low, stop):
        message = at(index)
        if message.role == "assistant":
            api_id = message.api_message_id
            same = api_id is not None and api_id == open_response
            if previous != "assistant" and not same:
                starts.add(index)
            open_response = api_id
        elif not message.is_tool_result_only:
            open_response = None
        previous = message.role
    return starts


def _in_progress_start(at: At, low: int, stop: int, firsts: set[int]) -> int:
    """Where the turn in progress of a request for the view up to `stop` starts (`stop` if
    none)."""
    index = stop
    while index > low and at(index - 1).role == "user" and at(index - 1).is_tool_result_only:
        index -= 1
    if index in (stop, low) or at(index - 1).role != "assistant":
        return stop
    turn = index - 1
    while turn > low and turn not in firsts:
        turn -= 1
    return turn
