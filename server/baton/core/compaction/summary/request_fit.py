"""The summary request fitted to the model's window before it is sent.

A span may hold more than the model can read: one pasted log of 50 MB, or an imported
session of millions of tokens. Sent whole, such a request is refused (413 for its bytes, or
"prompt is too long"), and dropping the oldest rounds on each refusal cannot help when the
newest round is the long one: the compaction failed after uploading it four times. So the
request is fitted first, on the messages' recorded counts: a message longer than a quarter
of the room is clipped (its head and tail kept, a line in between saying how much was left
out), then the context ahead of the span goes, then the span's oldest rounds, as a refusal
would have them go. The refusal's retries stay for an estimate that was short.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from baton.core.compaction.rounds import truncate_head
from baton.core.conversation.messages import Message, TextBlock

Count = Callable[[Message], int]

ROOM_SHARE = 0.85  # of the window the output leaves: the offline count's margin
CLIP_SHARE = 0.25  # the most of the room one message may take
MIN_CLIP_TOKENS = 2_000  # no message is clipped shorter
HEAD_SHARE = 2 / 3  # of what a clipped message keeps, its head; the rest its tail


@dataclass(frozen=True)
class Fitted:
    """The request's messages once fitted, and what fitting took out of them."""

    before: list[Message]
    body: list[Message]
    clipped: int = 0  # messages clipped
    left_out: int = 0  # messages of the context and of the span's oldest rounds left out

    def told(self) -> str | None:
        """What fitting did, as a progress line; None when it did nothing."""
        parts = []
        if self.clipped:
            parts.append(f"{self.clipped:,} long message{_s(self.clipped)} clipped")
        if self.left_out:
            parts.append(f"the oldest {self.left_out:,} message{_s(self.left_out)} left out")
        if not parts:
            return None
        return "The conversation is longer than the model can read at once: " + ", ".join(parts)


def room(window: int, max_output: int, fixed: int) -> int:
    """The tokens the request's messages may take: the window less the output, with a
    margin for the offline count, less what every attempt sends (system, prompt)."""
    return max(0, int((window - max_output) * ROOM_SHARE) - fixed)


def fit(before: Sequence[Message], body: Sequence[Message], tokens: int, count: Count) -> Fitted:
    """`before` and `body` (text messages, one block each, as the request sends them) made
    to fit `tokens`, by clipping, then leaving out the context, then the oldest rounds."""
    most = max(MIN_CLIP_TOKENS, int(tokens * CLIP_SHARE))
    fitted_before = [clipped(m, most, count) for m in before]
    fitted_body = [clipped(m, most, count) for m in body]
    originals, fitted = [*before, *body], [*fitted_before, *fitted_body]
    changed = sum(a is not b for a, b in zip(originals, fitted, strict=True))
    over = sum(map(count, fitted_before)) + sum(map(count, fitted_body)) - tokens
    left_out = 0
    if over > 0 and fitted_before:
        over -= sum(map(count, fitted_before))
        left_out, fitted_before = len(fitted_before), []
    if over > 0:
        shorter = truncate_head(fitted_body, over, count)
        if shorter is not None:
            kept = {id(m) for m in fitted_body}
            left_out += len(fitted_body) - sum(id(m) in kept for m in shorter)
            fitted_body = shorter
    return Fitted(fitted_before, fitted_body, changed, left_out)


def clip_longest(messages: Sequence[Message], count: Count) -> list[Message] | None:
    """`messages` with the longest one clipped to half its tokens, or None when even it is
    too short to clip (under twice MIN_CLIP_TOKENS): a refusal's last resort."""
    if not messages:
        return None
    longest = max(range(len(messages)), key=lambda i: count(messages[i]))
    tokens = count(messages[longest])
    if tokens < 2 * MIN_CLIP_TOKENS:
        return None
    out = list(messages)
    out[longest] = clipped(messages[longest], tokens // 2, count)
    return out


def clipped(message: Message, most: int, count: Count) -> Message:
    """`message` (text only, as the request sends it) cut to about `most` tokens: its head
    and tail, and a line saying how many characters between them were left out; the
    message itself when it is no longer."""
    tokens = count(message)
    text = message.text()
    if tokens <= most or not text:
        return message
    keep = len(text) * most // tokens
    head = int(keep * HEAD_SHARE)
    tail = keep - head
    marker = f"\n[... {len(text) - keep:,} characters left out of this message here ...]\n"
    cut = text[:head] + marker + (text[len(text) - tail :] if tail else "")
    return message.model_copy(update={"content": [TextBlock(text=cut)], "tokens": most})


def shortened(span: Sequence[Message], sent: Sequence[Message]) -> tuple[int, int]:
    """How many of the span's messages (as the request holds them) went unsent, and how many
    were sent clipped: `sent` is the span as the request that was answered held it."""
    by_id = {m.id: m for m in sent}
    left_out = sum(m.id not in by_id for m in span)
    clipped = sum(m.id in by_id and by_id[m.id] is not m for m in span)
    return left_out, clipped


def warning(left_out: int, clipped: int) -> str | None:
    """What a compaction's result says when its summary could not read the whole span."""
    parts = []
    if left_out:
        were = "was" if left_out == 1 else "were"
        parts.append(f"its oldest {left_out:,} message{_s(left_out)} {were} left out")
    if clipped:
        were = "was" if clipped == 1 else "were"
        parts.append(f"{clipped:,} long message{_s(clipped)} {were} sent clipped to head and tail")
    if not parts:
        return None
    return (
        "The span was longer than the summary's model reads at once: "
        + " and ".join(parts)
        + ". The transcript keeps them whole, and undoing the compaction gives them back."
    )


def _s(n: int) -> str:
    return "" if n == 1 else "s"
