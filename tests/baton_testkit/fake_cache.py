"""The fake API's prompt cache: usage worked out from the request as the real API bills it.

With `FakeAnthropic.prompt_cache` set to a `Segments` function (a request body -> the token
count of each of its cacheable pieces in order: tools and system first, then each message),
each Messages request's usage reports the longest prefix of pieces some earlier request
sent too as `cache_read_input_tokens` and the rest as `cache_creation_input_tokens` (the
whole request is written to the cache, as with a breakpoint on its last message);
`input_tokens` is 0 and `output_tokens` is what `output` counts of the reply. A script's own
usage still wins over these figures.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any

Segments = Callable[[dict[str, Any]], list[int]]
Output = Callable[[list[dict[str, Any]]], int]  # a reply's content -> its output tokens


def pieces(body: dict[str, Any]) -> list[str]:
    """Each cacheable piece of a request, as a hash of its JSON."""
    head = {"tools": body.get("tools"), "system": body.get("system")}
    items: list[Any] = [head, *(body.get("messages") or [])]
    return [hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest() for item in items]


class PromptCache:
    def __init__(self, segments: Segments, output: Output) -> None:
        self.segments = segments
        self.output = output
        self.seen: list[list[str]] = []
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> dict[str, int]:
        keys = pieces(body)
        counts = self.segments(body)
        with self._lock:
            shared = max((_common(keys, earlier) for earlier in self.seen), default=0)
            self.seen.append(keys)
        read = sum(counts[:shared])
        return {
            "input_tokens": 0,
            "output_tokens": self.output(reply),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": sum(counts) - read,
        }


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
