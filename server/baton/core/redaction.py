"""Secrets kept out of every log line and error text: the values to take out, and the filter.

Whatever shape a key has, its actual value is what is looked for (an `sk-ant-` pattern
misses a proxy's key or an auth token). The value is also looked for as JSON, `repr` and
URL encoding render it, since that is how it appears inside a logged payload.
"""

from __future__ import annotations

import json
import logging
import threading
from urllib.parse import quote

REDACTED = "[redacted]"
MIN_LENGTH = 4  # shorter values are no secret worth mangling every log line for

_lock = threading.Lock()
_values: tuple[str, ...] = ()  # longest first, so that a variant never leaves a piece


def remember(secret: str | None) -> None:
    """From now on, `secret` is taken out of log lines and error texts."""
    global _values
    if not secret or len(secret) < MIN_LENGTH:
        return
    variants = {secret, json.dumps(secret)[1:-1], repr(secret)[1:-1], quote(secret, safe="")}
    with _lock:
        found = set(_values) | {v for v in variants if len(v) >= MIN_LENGTH}
        _values = tuple(sorted(found, key=len, reverse=True))
    install()


def redact(text: str) -> str:
    """`text` with every remembered secret replaced by `[redacted]`."""
    for value in _values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def active() -> bool:
    return bool(_values)


class RedactingFilter(logging.Filter):
    """A handler filter: the record's message, exception and stack text, redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _values:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what can be shown
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Put the filter on every handler of `logger` (the root logger) that lacks it."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
