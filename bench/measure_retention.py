"""Retention after rounds of compaction: of every prompt ever typed (and every path touched),
how many a model can still see once a session was compacted three times, beside the same
session truncated to the same size.

A bench session (bench/sessions.py) is fed to a fresh session a third at a time (cut at a
prompt); after each third, `all` is compacted with the offline extractive summarizer, so
the second and third compactions summarize an earlier summary. A prompt is visible when
its first 200 characters (whitespace-insensitive) are in what the view holds, the rule of
the retention report; a path when it is. The baseline keeps the newest messages that fit
in the tokens of Baton's final view and drops the rest, what a client without compaction
does.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.facts import message_haystack, normalize, prompt_texts
from baton.core.compaction.retention.ledger import PROMPT_PREFIX_CHARS, found_in
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import Message
from baton.core.conversation.store import SessionStore
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator

ROUNDS = 3


def visible(facts: Sequence[str], view: Sequence[Message], prefix: int | None) -> int:
    """How many of `facts` the view shows (a prompt by its first `prefix` characters)."""
    haystack = message_haystack(view)
    return sum(1 for fact in facts if found_in(haystack, normalize(fact), prefix))


def parts(messages: Sequence[Message], rounds: int) -> list[list[Message]]:
    """The messages in `rounds` parts of about as many prompts each, cut before a prompt."""
    starts = [i for i, message in enumerate(messages) if message.is_user_prompt]
    cuts = [0, *(starts[len(starts) * k // rounds] for k in range(1, rounds)), len(messages)]
    return [list(messages[a:b]) for a, b in itertools.pairwise(cuts)]


def truncated(messages: Sequence[Message], tokens: int) -> list[Message]:
    """The newest messages whose tokens add up to at most `tokens`."""
    kept: list[Message] = []
    total = 0
    for message in reversed(messages):
        total += message.tokens or 0
        if total > tokens:
            break
        kept.append(message)
    return kept[::-1]


async def rounds_of_compaction(
    messages: Sequence[Message], estimator: Estimator, *, rounds: int = ROUNDS, small: bool = False
) -> dict[str, Any]:
    """Compact `messages` in `rounds` rounds and count what stays visible (see above).
    `small`: a smaller recent window, for sessions too small for the default one."""
    settings = Settings()
    if small:
        settings = Settings(keep_window=KeepWindowSettings(min_tokens=1_000, min_text_messages=3))
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    with tempfile.TemporaryDirectory(prefix="baton-retention-") as folder:
        store = SessionStore(Path(folder), estimator.count_message)
        session = store.create(title="three rounds")
        per_round: list[float] = []
        typed: list[str] = []
        for part in parts(messages, rounds):
            session.append([message.model_copy() for message in part])
            typed += prompt_texts(part)
            await compact(session, CompactRequest(direction="all"), ctx)
            shown = visible(typed, session.view_messages(), PROMPT_PREFIX_CHARS)
            per_round.append(100 * shown / max(len(typed), 1))
        view = session.view_messages()
        tokens = sum(estimator.count_message(m) for m in view)
        store.close()
    prompts = prompt_texts(messages)
    paths = [touch.path for touch in SpanFacts.extract(messages).paths]
    tail = truncated(messages, tokens)
    return {
        "prompts": len(prompts),
        "paths": len(paths),
        "view_tokens": tokens,
        "prompts_pct": 100 * visible(prompts, view, PROMPT_PREFIX_CHARS) / max(len(prompts), 1),
        "paths_pct": 100 * visible(paths, view, None) / max(len(paths), 1),
        "rounds_pct": per_round,
        "truncated_prompts_pct": 100
        * visible(prompts, tail, PROMPT_PREFIX_CHARS)
        / max(len(prompts), 1),
        "truncated_paths_pct": 100 * visible(paths, tail, None) / max(len(paths), 1),
    }
