"""What a reply stream that failed leaves: what it had delivered, riding on the exception
that stopped it; and whether it is asked again, here rather than inside the SDK so that
each wait is told (`OnWait`): a request the SDK would ask again (a status it retries, such
as 429 or 529, after the `retry-after` the API asked for; a connection that failed before
the answer), one the API ended with an overload (or another error the SDK retries when the
API answers it as an HTTP status), or one that broke (its connection lost, or ended without
its last event), before anything of the reply arrived, after the SDK's backoff, as often as
the client's retries."""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from baton.core.errors import ApiError
from baton.core.model_api.reply_stream import ModelReply

log = logging.getLogger(__name__)
_PARTIAL_ATTR = "baton_partial_reply"
_STALLED_ATTR = "baton_stalled"
_ASKED_AGAIN_ATTR = "baton_asked_again"
OnWait = Callable[[str], None]  # told, before each wait, what it waits for and how long
Answer = TypeVar("Answer")


class WaitText(str):
    """A wait's text (`wait_text`): told as progress too, where a front end that shows only
    the waits of a piece of work (an ACP compaction) knows it by its type."""


def attach_partial(exc: BaseException, reply: ModelReply | None) -> None:
    setattr(exc, _PARTIAL_ATTR, reply)


def mark_stalled(error: ApiError) -> None:
    """`error` is a stream that stalled past the client's timeout: asking again would wait
    that long once more, so it goes through."""
    setattr(error, _STALLED_ATTR, True)


def mark_asked_again(error: BaseException, after: float | None) -> None:
    """`error` is an answer the SDK asks again (a status it retries, or no answer at all);
    `after`: the seconds the API's `retry-after` asked for, when it did."""
    setattr(error, _ASKED_AGAIN_ATTR, (after,))


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
MAX_ASKED = 60.0  # seconds: a longer retry-after is not waited, the backoff is (a stalled
# minute is no wait to sit through: the SDK itself waits out any retry-after)


def retry_delay(
    error: ApiError, partial: ModelReply | None, retries: int, max_retries: int
) -> float | None:
    """Seconds to wait before asking again, or None when `error` goes through: it is
    neither an answer the SDK asks again (`mark_asked_again`), a broken stream nor an error
    event the API sent mid-stream (those have no status) of a type retried, it stalled past
    the timeout (`mark_stalled`), something of the reply arrived (`partial`: shown, or kept
    as interrupted), or the `retries` made already reach `max_retries`. The wait is the
    `retry-after` the API asked for (up to MAX_ASKED), else the SDK's backoff."""
    kind = error.data.get("type")
    asked: tuple[float | None] | None = getattr(error, _ASKED_AGAIN_ATTR, None)
    if asked is None and (
        error.data.get("status") is not None or (kind not in RETRIED_EVENTS and kind != BROKEN)
    ):
        return None
    if partial is not None or retries >= max_retries or getattr(error, _STALLED_ATTR, False):
        return None
    after = asked[0] if asked is not None else None
    if after is not None and 0 < after <= MAX_ASKED:
        return after
    delay = min(INITIAL_DELAY * 2.0**retries, MAX_DELAY)
    return delay * (1 - 0.25 * random.random())  # the SDK's jitter


def wait_text(error: ApiError, delay: float, attempt: int, attempts: int) -> WaitText:
    """What a wait before asking again says, the same in the panel, over ACP and in the CLI:
    "Rate limited by the API: trying again in 30 s (attempt 2 of 3)"."""
    status, kind = error.data.get("status"), error.data.get("type")
    if status == 429 or kind == "rate_limit_error":
        why = "Rate limited by the API"
    elif status == 529 or kind == "overloaded_error":
        why = "The API is overloaded"
    elif kind == BROKEN:
        why = "The reply stream broke before the reply began"
    elif kind == "connection_error":
        why = "Could not reach the API"
    elif kind == "timeout":
        why = "The API did not answer in time"
    else:
        why = "The API failed on its side"
    seconds = math.ceil(delay)
    return WaitText(f"{why}: trying again in {seconds} s (attempt {attempt} of {attempts})")


async def retried(
    stream: Callable[[int], Awaitable[Answer]], max_retries: int, on_wait: OnWait | None = None
) -> Answer:
    """`stream(retries)` (the retries made so far), asked again while it fails in a way
    `retry_delay` retries, each wait told to `on_wait` first: a reply, or any other request
    whose failures are marked (`mark_asked_again`). The reply's partial rides on its error
    (`attach_partial`), so it is read from there. A cancel during a wait ends it at once."""
    retries = 0
    while True:
        try:
            return await stream(retries)
        except ApiError as error:
            delay = retry_delay(error, partial_reply(error), retries, max_retries)
            if delay is None:
                raise
            text = wait_text(error, delay, retries + 2, max_retries + 1)
        retries += 1
        log.info("%s", text)
        if on_wait is not None:
            on_wait(text)
        await asyncio.sleep(delay)
