"""The fake API's usage as the size of what it was sent: each request's body counted as the
estimator counts it, at a factor of 1, so a test can hold the meter against the very next
request; and seeded prose to fill the turns."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from baton.core.conversation.messages import Message
from baton.core.model_api.api_messages import api_turns
from baton.core.usage.estimator import MESSAGE_OVERHEAD, Estimator

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "parser",
    "token",
    "budget",
    "window",
    "cache",
    "file",
    "module",
    "reply",
]


def prose(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(words))


def raw_size(estimator: Estimator, body: dict[str, Any]) -> int:
    size = (
        estimator.count_text(body.get("system") or "") if isinstance(body.get("system"), str) else 0
    )
    if isinstance(body.get("system"), list):
        size = sum(estimator.count_text(b.get("text", "")) for b in body["system"])
    size += estimator.count_json(body["tools"]) if body.get("tools") else 0
    for message in body.get("messages") or []:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        size += 4 + estimator.count_blocks(blocks)
    return size


def framing_not_sent(view: Sequence[Message]) -> int:
    """The framing the stored counts of `view` hold beyond what a request for it sends:
    each stored count holds its message's, the request one per turn (`api_turns`)."""
    return MESSAGE_OVERHEAD * (len(view) - len(api_turns(view)))


class SizeOfRequest:
    """The fake's usage (`FakeAnthropic.prompt_cache`): what each request was sent."""

    def __init__(self, estimator: Estimator) -> None:
        self.estimator = estimator

    def usage(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> dict[str, int]:
        return {
            "input_tokens": raw_size(self.estimator, body),
            "output_tokens": 4 + self.estimator.count_blocks(reply),
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
