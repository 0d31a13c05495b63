"""The context figures a compaction reports: what the meter
(`usage/session_usage.compute_usage`) will show once the view is the one it leaves, worked
out before it is committed, so that a compaction's `postTokens`, its dry run and the meter
are one figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from baton.core.compaction.represented import SUMMARY_MAX_TOKENS
from baton.core.compaction.retention.ledger_text import LEDGER_MAX_TOKENS
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.conversation.thinking_sent import thinking_left_out
from baton.core.conversation.turn_framing import joined_framing, reply_framing_unsent
from baton.core.errors import SummarizerFailed
from baton.core.usage.budget import budget_for
from baton.core.usage.budget_note import next_note_tokens
from baton.core.usage.overhead import carried_tokens, note_of

if TYPE_CHECKING:
    from baton.core.compaction.engine import CompactContext

# Below this many tokens a compaction may leave the context larger (see check_smaller).
MIN_CHECKED_TOKENS = 10_000


def estimate(
    session: Session,
    ctx: CompactContext,
    messages: Sequence[Message],
    unsent: int = 0,
    own: tuple[int, int] | None = None,
) -> int:
    """Estimated context tokens of a view: right after a compaction there is no API usage
    that still describes it (`unsent`: raw tokens of thinking the request leaves out),
    each turn's framing counted once (`turn_framing.py`), as the meter counts it. `own`:
    the view's own share (`view_share`), when figured ahead."""
    declared = session.client_context
    raw = ctx.estimator.count_text(session.system_prompt or "") + ctx.tools_tokens
    raw += declared.system_tokens + declared.tools_tokens
    tokens, media = own if own is not None else view_share(ctx, messages)
    return ctx.estimator.calibrated(raw + tokens - unsent, media)


def view_share(ctx: CompactContext, messages: Sequence[Message]) -> tuple[int, int]:
    """What a view's messages add to its `estimate` (their tokens less the framing their
    turns share) and their media's tokens: read from the messages alone, so it may be
    figured off the event loop (a 100,000-message view: about a second)."""
    tokens = sum(m.tokens or ctx.estimator.count_message(m) for m in messages)
    return tokens - joined_framing(messages), ctx.estimator.media_in(messages)


def after_compaction(session: Session, ctx: CompactContext, messages: Sequence[Message]) -> int:
    """The context a compaction leaves with `messages` as its view, as the meter will show
    it (`session_usage.compute_usage`): a usage in the prefix the compaction keeps as it was
    (after `from` or `range`) plus the estimate of what follows it; else their estimate plus
    what the API's last usage saw besides the view it covered."""
    same = 0  # the messages the compaction leaves where they were, from the start
    for current, message in zip(session.view, messages, strict=False):
        if current != message.id:
            break
        same += 1
    anchor = session.anchor_before(same)
    start = anchor[0] + 1 if anchor is not None else 0
    unsent = _thinking_left_out(session, ctx, messages, same, start)
    if anchor is not None:
        index, usage = anchor
        after = sum(m.tokens or ctx.estimator.count_message(m) for m in messages[index + 1 :])
        after -= joined_framing(messages, index + 1) + reply_framing_unsent(messages[index])
        media = ctx.estimator.media_in(messages[index + 1 :])
        figure = usage.context_tokens + ctx.estimator.calibrated(after - unsent, media)
        # its request's budget note stands for the next one's while due, as in the meter
        then = note_of(session, index)
        gone = then and not _next_note(session, ctx, figure - then)
        return max(0, figure - then) if gone else figure
    carried = carried_tokens(session, ctx.estimator, ctx.tools_tokens)
    figure = max(0, estimate(session, ctx, messages, unsent) + carried)
    return figure + _next_note(session, ctx, figure)


def _next_note(session: Session, ctx: CompactContext, figure: int) -> int:
    """The budget note the request after the compaction carries when due, as the meter
    counts it where no usage anchors the figure (`session_usage.compute_usage`): a
    compaction resets a paused auto-compact (a manual one) or ran while it was not paused
    (an automatic one), so the note says it fires."""
    settings = ctx.settings
    model = session.model or settings.model
    budget, _ = budget_for(model, settings)
    count = ctx.estimator.count_text
    return next_note_tokens(figure, budget, settings, None, model, count)


def _thinking_left_out(
    session: Session, ctx: CompactContext, messages: Sequence[Message], same: int, start: int
) -> int:
    """Raw tokens of the thinking the request after the compaction leaves out of
    messages[start:], as the meter will take it out: the turns after the first change
    follow a new view, so they go without their thinking (`thinking_sent.py`)."""
    if not session.holds_thinking:
        return 0
    left_out = thinking_left_out(
        messages.__getitem__,
        start,
        len(messages),
        lambda i: i < same and session.unchanged_before(i),
        continued=False,  # as the meter: the request a new prompt starts
        own=session.own_requests,
    )
    return sum(ctx.estimator.count_thinking(messages[i]) for i in left_out)


def check_smaller(
    ctx: CompactContext, before: int, after: int, reclaimable: int, dry_run: bool
) -> list[str]:
    """Refuse a compaction whose summary would not make the context smaller: it would
    trade messages for a longer text about them, and auto-compact would try again at once.
    A dry run is not refused: the warnings it returns say so.

    Both figures are the meter's: `before` the usage at the compaction's start (API usage
    when there is one), `after` what the compaction reports as its `postTokens`, without
    the editor files restored into it (those are a separate addition with their own bound,
    BEHAVIOR 6).
    A conversation under MIN_CHECKED_TOKENS (`reclaimable`: the smaller of the usage and
    the estimate of the view, so what the client sends besides the messages does not
    count) is exempt: nothing there needs reclaiming, a summary has a fixed size of its
    own (headings, the wrapper) that a short conversation may not reach, and its growth is
    bounded (the summarizer's bound plus the ledger's): while it stays so (a summary the
    user edited is bounded by nothing but its length). Its dry run still says it."""
    if after < before:
        return []
    grows = f"({before:,} tokens before, {after:,} after)"
    if (
        reclaimable < MIN_CHECKED_TOKENS
        and after - before <= SUMMARY_MAX_TOKENS + LEDGER_MAX_TOKENS
    ):
        exempt = f"under {MIN_CHECKED_TOKENS:,} tokens it is compacted all the same"
        return (
            [f"the summary would not make the conversation smaller {grows}; {exempt}"]
            if dry_run
            else []
        )
    refusal = f"the {ctx.summarizer.name} summary would not make the conversation smaller {grows}"
    if dry_run:
        return [refusal]
    raise SummarizerFailed(f"{refusal}; nothing was changed")
