"""Calibration: the estimator taught from the real usage of a reply's prompt side.

A session's first usage teaches the ratio of its prompt to the estimate; later ones teach
the ratio of the growth since the previous usage to the estimate of what was added, so
what a client sends besides the messages (its own system prompt and tools, unknown unless
it declares them) cancels out instead of passing for a tokenizer that counts more."""

from __future__ import annotations

from baton.core.conversation.messages import ApiUsage
from baton.core.conversation.recorded_usage import response_start
from baton.core.conversation.session import Session
from baton.core.conversation.thinking_sent import STALE_PREFIX
from baton.core.usage.estimator import Estimator

# Tiny prompts are dominated by framing the API adds (tool-use preambles and the like);
# learning a factor from them would skew every larger count.
MIN_CALIBRATION_SAMPLE = 256


def observe_response(
    session: Session,
    message_id: str,
    estimator: Estimator,
    *,
    tools_tokens: int = 0,
    note_tokens: int = 0,
) -> None:
    """Teach the estimator from a reply's real usage: its prompt side vs our estimate (the
    system prompt, the tools, what the client declared it sends besides, the view before
    the response's first record, and the budget note its request carried, `note_tokens`,
    which is never stored)."""
    message = session.get(message_id)
    if not message.anchors_usage or message.usage is None:
        return
    # the prompt is what preceded the response's first record (parallel tool calls split
    # one response into several records with results between them)
    first = response_start(session.messages, session.view, session.index_in_view(message_id))
    declared = session.client_context
    estimate = estimator.count_text(session.system_prompt or "") + tools_tokens + note_tokens
    estimate += declared.system_tokens + declared.tools_tokens
    estimate += session.tokens_in_view(0, first, estimator.count_message)
    actual = _prompt_side(message.usage)
    previous = session.anchor_before(first)
    start = previous[0] if previous is not None else 0
    # the thinking its request left out is in the stored counts, not in the usage
    left_out = session.thinking_left_out(start, first)
    unsent = estimator.thinking_of(session.messages, left_out)
    # images and documents are counted in the API's units: the factor is learned without them
    media = session.media_tokens_in_view(start, first, estimator.count_message_media)
    if previous is not None:
        earlier = previous[1]
        added = session.tokens_in_view(start, first, estimator.count_message) - unsent
        # what the earlier usage held that this request left out (a stale tool loop's)
        dropped = [m for m in session.thinking_dropped(start, first) if m not in left_out]
        added -= estimator.thinking_of(session.messages, dropped)
        grown = actual - _prompt_side(earlier)
        # the budget note of each request is in its usage: one that first appears is grown
        # by its tokens; two of them cancel (a digit or so apart); one that went, of a size
        # no longer known, leaves no sample
        noted_before = _carried_note(session, start)
        if noted_before and not note_tokens:
            return
        if not noted_before:
            added += note_tokens
        if added - media >= MIN_CALIBRATION_SAMPLE and grown > 0:
            estimator.observe(added, grown, media)
        return
    estimate -= unsent
    if estimate - media >= MIN_CALIBRATION_SAMPLE:
        estimator.observe(estimate, actual, media)


def _carried_note(session: Session, start: int) -> bool:
    """Whether the request of the response whose first record is view[start] carried the
    budget note: a reply made after it is marked stale (no later request repeats its
    prefix), as one on a turn in progress sent back after its prefix changed is too."""
    message = session.messages[session.view[start]]
    return (message.prefix_hash or "").startswith(STALE_PREFIX)


def _prompt_side(usage: ApiUsage) -> int:
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
