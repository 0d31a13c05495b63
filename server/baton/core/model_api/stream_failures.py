"""What a reply stream that failed leaves: what it had delivered, riding on the exception
that stopped it; and whether it is asked again: one the API ended with an overload (or
another error the SDK retries when the API answers it as an HTTP status), or one that broke
(its connection lost, or ended without its last event), before anything of the reply
arrived, after the SDK's backoff, as often as the client lets the SDK retry."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable

from baton.core.errors import ApiError
from baton.core.model_api.reply_stream import ModelReply

log = logging.getLogger(__name__)
_PARTIAL_ATTR = "baton_partial_reply"
_STALLED_ATTR = "baton_stalled"


def attach_partial(exc: BaseException, reply: ModelReply | None) -> None:
    setattr(exc, _PARTIAL_ATTR, reply)


def mark_stalled(error: ApiError) -> None:
    """`error` is a stream that stalled past the client's timeout: asking again would wait
    that long once more, so it goes through."""
    setattr(error, _STALLED_ATTR, True)


def partial_reply(exc: BaseException) -> ModelReply | None:
    """What a stopped stream had delivered, when the client that raised `exc` recorded it."""
    reply = getattr(exc, _PARTIAL_ATTR, None)
    return reply if isinstance(reply, ModelReply) else None


# the error events of a stream that stand for the statuses the SDK retries (529, 500, 429)
RETRIED_EVENTS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
# a stream that broke: retried as the SDK retries a connection that fails before the answer
BROKEN = "stream_error"
INITIAL_DELAY = 0.5  # seconds, doubled on each retry up to MAX_DELAY (the SDK's figures)
MAX_DELAY = 8.0


def retry_delay(
    error: ApiError, partial: ModelReply | None, retries: int, max_retries: int
) -> float | None:
    """Seconds to wait before asking again, or None when `error` goes through: it is
    neither a broken stream nor an error event the API sent mid-stream (those have no
    status) of a type retried, it stalled past the timeout (`mark_stalled`), something of
    the reply arrived (`partial`: shown, or kept as interrupted), or the `retries` made
    already reach `max_retries`."""
    kind = error.data.get("type")
    if error.data.get("status") is not None or (kind not in RETRIED_EVENTS and kind != BROKEN):
        return None
    if partial is not None or retries >= max_retries or getattr(error, _STALLED_ATTR, False):
        return None
    delay = min(INITIAL_DELAY * 2.0**retries, MAX_DELAY)
    return delay * (1 - 0.25 * random.random())  # the SDK's jitter


async def retried(stream: Callable[[], Awaitable[ModelReply]], max_retries: int) -> ModelReply:
    """`stream()`, asked again while it fails in a way `retry_delay` retries. The reply's
    partial rides on its error (`attach_partial`), so it is read from there."""
    retries = 0
    while True:
        try:
            return await stream()
        except ApiError as error:
            delay = retry_delay(error, partial_reply(error), retries, max_retries)
            if delay is None:
                raise
        retries += 1
        log.debug("the reply stream ended before any content: asking again in %.2fs", delay)
        await asyncio.sleep(delay)
