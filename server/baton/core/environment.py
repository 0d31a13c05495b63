"""Values read from the environment: numbers (BATON_API_TIMEOUT, BATON_ACP_PERMISSION_WAIT,
BATON_TOKEN_TIMEOUT; a value out of its range warns and takes the default), what an
endpoint (the `anthropicBaseUrl` setting, ANTHROPIC_BASE_URL) must be, and an API key as
given (ANTHROPIC_API_KEY, initializationOptions) without what surrounds it, and what in it
no header can carry."""

from __future__ import annotations

import logging
import math
import os
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

DAY = 86_400.0  # seconds: the longest wait any of them allows
SHOWN = 40  # characters of a bad value the warning quotes


def seconds(name: str, default: float, maximum: float = DAY) -> float:
    """The environment variable `name` as a number of seconds in (0, maximum]; unset or
    empty: `default`; anything else (not a number, nan, inf, 0, negative, past `maximum`)
    warns, naming the variable and its range, and takes `default`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if 0 < value <= maximum:
        return value
    shown = raw if len(raw) <= SHOWN else raw[:SHOWN] + "..."
    log.warning(
        "%s=%r is not a number of seconds in (0, %g]: using %g",
        name,
        shown,
        maximum,
        default,
    )
    return default


def is_http_url(text: str) -> bool:
    """An http:// or https:// URL naming a host: an endpoint requests can go to ("localhost:8080"
    is not one: every request fails as a connection error)."""
    url = urlsplit(text)
    return url.scheme in ("http", "https") and bool(url.hostname)


def api_key(given: str | None) -> str | None:
    """An API key without the white space around it (a line break a key file or a Windows
    `.env` left after it, a space pasted before it): no key holds any, and sent in a header
    it failed every request as a connection error. None for no key, or white space alone."""
    return given.strip() or None if given else None


def key_flaw(key: str) -> str | None:
    """What in an API key no request header can carry, said for a person who cannot see
    it (a line break of two keys pasted together or of a wrapped line, a tab, a
    typographic dash pasted from a page): none, for a key made of printable ASCII."""
    if "\n" in key or "\r" in key:
        return "a line break"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        return "a control character"
    if not key.isascii():
        return "a character that is not ASCII"
    return None
