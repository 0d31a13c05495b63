"""The Baton error for an SDK or transport failure: what happened, in the API's words
without the key, and what the person who sees it can do (check the key, wait for a rate
limit or an overload to pass, check the network), said once here for the panel, the CLI
and ACP alike."""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping

import anthropic

from baton.core import redaction
from baton.core.errors import ApiError, PromptTooLong
from baton.core.model_api.stream_failures import mark_stalled

_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens?\s*>\s*(\d+)", re.IGNORECASE)
_KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_\-]{6,}")
RETRY_AFTER_MAX = 24 * 3600  # seconds: a longer retry-after is not quoted (not a real wait)

KEY_REFUSED = "Check the Anthropic API key (set a valid one), then try again."
NOT_ALLOWED = "The API key may not use this model or feature: check the key's access."
NO_MODEL = (
    "Check the model's name (the model setting, or pick another model), and the API's "
    "address (anthropicBaseUrl or ANTHROPIC_BASE_URL) when one is set."
)
OVERLOADED = "The API is overloaded: try again in a few minutes."
FAILED_THERE = "The API failed on its side: try again in a moment."
NOT_REACHED = (
    "Check the network connection (and anthropicBaseUrl or ANTHROPIC_BASE_URL, when set), "
    "then try again."
)
STREAM_BROKE = "The connection was lost mid-reply: try again."
TIMED_OUT = "Try again; BATON_API_TIMEOUT sets how long a request may take (default 600 s)."


def scrub(text: str, secret: str | None) -> str:
    """`text` with the API key (and anything shaped like one) taken out; a key too short to
    be a secret (redaction.MIN_LENGTH) is left, or each of its letters would go."""
    if secret and len(secret) >= redaction.MIN_LENGTH:
        text = text.replace(secret, "[redacted]")
    return _KEY_SHAPE.sub("[redacted]", redaction.redact(text))


def map_error(exc: BaseException, secret: str | None) -> ApiError | PromptTooLong:
    """The Baton error for an SDK or transport failure (never carrying the key)."""
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        kind = str(exc.type or "error")
        message = scrub(str(exc.api_message or exc.message), secret)
        match = _TOO_LONG.search(message)
        too_long = match or "prompt is too long" in message.lower()
        if not too_long and (status == 413 or kind == "request_too_large"):
            kind = "request_too_large"
            # a body over the API's 32 MB, whatever its tokens (its images and documents)
            return PromptTooLong(
                f"the API refused the request for its size in bytes ({kind}), however few "
                f"its tokens: {message}",
                status=status,
                type=kind,
            )
        if too_long or status == 413:
            actual, limit = (int(match[1]), int(match[2])) if match else (None, None)
            return PromptTooLong(
                f"the prompt is too long for the model: {message}",
                actual=actual,
                limit=limit,
                status=status,
            )
        if status < 400:  # an `error` event inside a stream that had started fine
            text = f"the Anthropic API stopped the reply ({kind}): {message}"
            return ApiError(_advised(text, _advice(None, kind)), status=None, type=kind)
        text = f"Anthropic API error {status} ({kind}): {message}"
        advice = _advice(status, kind, _retry_after(exc.response.headers))
        return ApiError(_advised(text, advice), status=status, type=kind)
    if isinstance(exc, anthropic.APITimeoutError):
        text = "the Anthropic API timed out"
        return ApiError(_advised(text, TIMED_OUT), status=None, type="timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        text = f"could not reach the Anthropic API: {scrub(str(exc), secret)}"
        return ApiError(_advised(text, NOT_REACHED), status=None, type="connection_error")
    return _stream_broke(exc, secret)


def broken_stream(exc: BaseException, secret: str | None) -> ApiError | PromptTooLong:
    """The Baton error for a failure once the reply had begun: the stream broke, however
    the SDK words a connection lost mid-reply (a transport error of its HTTP library, or,
    in newer versions, its own connection or timeout error); an `error` event the API
    sent mid-stream keeps its own type (`map_error`)."""
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        if isinstance(exc, anthropic.APITimeoutError) or "Timeout" in type(cause).__name__:
            text = (
                "the reply stream broke: the Anthropic API sent nothing more within the "
                f"timeout ({type(cause).__name__})"
            )
            error = ApiError(_advised(text, TIMED_OUT), status=None, type="stream_error")
            mark_stalled(error)  # waited out the whole timeout: not asked again
            return error
        return _stream_broke(cause, secret, STREAM_BROKE)
    return map_error(exc, secret)


def _stream_broke(cause: BaseException, secret: str | None, advice: str | None = None) -> ApiError:
    """A stream that failed: a connection lost mid-reply (`advice` says what to do), or
    something else that broke it (said as it is)."""
    detail = scrub(f"{type(cause).__name__}: {cause}", secret)
    text = f"the reply stream broke: {detail}"
    return ApiError(_advised(text, advice), status=None, type="stream_error")


def _advice(status: int | None, kind: str, retry_after: int | None = None) -> str | None:
    """What to do about an API error, by its status or type; None for one that only a
    change of the request mends (a 400 says what in its own words)."""
    if status == 401 or kind == "authentication_error":
        return KEY_REFUSED
    if status == 403 or kind == "permission_error":
        return NOT_ALLOWED
    if status == 404 or kind == "not_found_error":
        return NO_MODEL
    if status == 429 or kind == "rate_limit_error":
        wait = "in a minute"
        if retry_after is not None:
            wait = f"in {retry_after:,} second{'s' if retry_after != 1 else ''}"
        return f"Rate limited: try again {wait}."
    if status == 529 or kind == "overloaded_error":
        return OVERLOADED
    if (status is not None and status >= 500) or kind == "api_error":
        return FAILED_THERE
    return None


def asked_again(exc: BaseException) -> tuple[float | None] | None:
    """Whether the SDK would ask a request again that failed with `exc` before its answer
    began (None: it would not), and the seconds the API's `retry-after-ms` or `retry-after`
    asked for: a connection that failed or timed out, or a status it retries (408, 409,
    429, 5xx), unless the API's `x-should-retry` says otherwise."""
    if isinstance(exc, anthropic.APIConnectionError):
        return (None,)
    if not isinstance(exc, anthropic.APIStatusError):
        return None
    headers = exc.response.headers
    should = headers.get("x-should-retry")
    status = exc.status_code
    if should == "false" or (should != "true" and status not in (408, 409, 429) and status < 500):
        return None
    return (asked_for(headers),)


def asked_for(headers: Mapping[str, str]) -> float | None:
    """The seconds the API asked to wait before a request is asked again, read as the SDK
    reads them: `retry-after-ms`, else `retry-after` in seconds (a fraction allowed), else
    `retry-after` as an HTTP date (seconds from now, below zero once past); None when none
    of them can be read. The wait (`stream_failures.retry_delay`) and the advice quoted in
    the error both read it here, so they never tell two numbers."""
    try:
        return float(headers.get("retry-after-ms", "")) / 1000
    except ValueError:
        pass
    raw = headers.get("retry-after")
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        pass
    date = email.utils.parsedate_tz(raw)
    return email.utils.mktime_tz(date) - time.time() if date is not None else None


def _retry_after(headers: Mapping[str, str]) -> int | None:
    """The whole seconds the API asked to wait (`asked_for`), rounded up as the wait's own
    text rounds them (`stream_failures.wait_text`); None for none, one already past, or one
    too long to be a real wait."""
    seconds = asked_for(headers)
    if seconds is None or not 0 <= seconds <= RETRY_AFTER_MAX:
        return None
    return max(1, math.ceil(seconds))


def _advised(text: str, advice: str | None) -> str:
    return f"{text}. {advice}" if advice else text
