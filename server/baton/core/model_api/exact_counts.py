"""Exact counts: the API's own count of a session's view, fetched in the background."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from baton.core.background import Background
from baton.core.conversation.session import Session
from baton.core.errors import BatonError
from baton.core.model_api.reply_request import build_payload
from baton.core.usage.budget import Breakdown, Budget, Usage, percent_left, usage_state

log = logging.getLogger(__name__)

DELAY = 0.5  # seconds of quiet after the last change before one count is asked for

Fingerprint = tuple[str, str, tuple[str, ...], str]


class TokenCounter(Protocol):
    async def count_tokens(
        self,
        *,
        model: str,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
    ) -> int: ...


def fingerprint(session: Session, model: str, tools: list[dict[str, Any]] | None) -> Fingerprint:
    """Everything the count depends on: the model, the system prompt, the view, the tools.
    Messages never change once appended, so their ids stand for their content."""
    system = hashlib.sha256((session.system_prompt or "").encode()).hexdigest()
    tool_text = json.dumps(tools, sort_keys=True) if tools else ""
    return model, system, tuple(session.view), hashlib.sha256(tool_text.encode()).hexdigest()


class ExactCounts:
    """One exact figure per session, valid while the session's fingerprint is unchanged.

    `request` asks for a count after a change; changes within `delay` of each other make
    one call (it counts the view as the last of them left it). Failures are logged and
    ignored: the estimate stands."""

    def __init__(self, background: Background, delay: float = DELAY) -> None:
        self._background = background
        self._delay = delay
        self._figures: dict[str, tuple[Fingerprint, int]] = {}

    def figure(self, session_id: str, current: Fingerprint) -> int | None:
        known = self._figures.get(session_id)
        return known[1] if known is not None and known[0] == current else None

    def request(
        self, session_id: str, current: Fingerprint, run: Callable[[], Coroutine[Any, Any, Any]]
    ) -> None:
        """Schedule `run` (which calls `count`) unless the current view is already counted."""
        if self.figure(session_id, current) is None:
            self._background.debounce(f"exact:{session_id}", self._delay, run, "exact count")

    def forget(self, session_id: str) -> None:
        self._figures.pop(session_id, None)

    async def count(
        self,
        session: Session,
        model: str,
        tools: list[dict[str, Any]] | None,
        client: TokenCounter,
    ) -> bool:
        """Count the view now; True when a figure for the still-current view was kept."""
        before = fingerprint(session, model, tools)
        view = session.view_messages()
        if not view or self.figure(session.session_id, before) is not None:
            return False
        try:
            tokens = await client.count_tokens(
                model=model,
                system=session.system_prompt,
                messages=build_payload(view, session.system_prompt, tools).messages,
                tools=tools,
            )
        except BatonError as exc:
            log.warning("exact count of %s failed: %s", session.session_id, exc.message)
            return False
        except Exception as exc:  # never fatal: the estimate stands
            log.warning("exact count of %s failed: %s", session.session_id, type(exc).__name__)
            return False
        if fingerprint(session, model, tools) != before:
            return False  # the view moved on while we asked; its own count is scheduled
        self._figures[session.session_id] = (before, tokens)
        return True


def with_exact_count(usage: Usage, tokens: int, budget: Budget) -> Usage:
    """`usage` re-stated around an exact token count (no longer an estimate)."""
    parts = usage.breakdown
    old = [parts.system, parts.tools, parts.messages, parts.summary, parts.attachments]
    scaled = _scaled(old, tokens)
    return usage.model_copy(
        update={
            "used_tokens": tokens,
            "percent_used": round(min(100.0, max(0.0, 100 * tokens / usage.context_window)), 1),
            "percent_left": percent_left(tokens, budget, usage.auto_compact_enabled),
            "state": usage_state(tokens, budget, usage.auto_compact_paused),
            "estimated": False,
            "basis": "exact",
            "breakdown": Breakdown(
                system=scaled[0],
                tools=scaled[1],
                messages=scaled[2],
                summary=scaled[3],
                attachments=scaled[4],
                free=max(0, usage.context_window - tokens),
            ),
        }
    ).worded()


def _scaled(parts: list[int], total: int) -> list[int]:
    """`parts` scaled to add up to `total` (the rounding remainder goes to the largest)."""
    weight = sum(parts)
    if weight <= 0:
        return [0, 0, total, 0, 0]  # nothing to go by: call it all messages
    scaled = [part * total // weight for part in parts]
    scaled[parts.index(max(parts))] += total - sum(scaled)
    return scaled
