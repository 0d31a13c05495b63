"""Exact counts: the API's own count of a session's view, fetched in the background."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
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


@dataclass(eq=False)
class ExactState:
    """One session's exact figure (for the fingerprint it was counted for) and the count
    waiting for quiet. The service keeps it in the session's runtime."""

    figure: tuple[Fingerprint, int] | None = None
    timer: asyncio.TimerHandle | None = None

    def stop(self) -> None:
        """Cancel the count that waits, if any."""
        timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()


StateOf = Callable[[str], ExactState]


class ExactCounts:
    """One exact figure per session, valid while the session's fingerprint is unchanged.

    `request` asks for a count after a change; changes within `delay` of each other make
    one call (it counts the view as the last of them left it). Failures are logged and
    ignored: the estimate stands. `states` gives each session's state, from its owner
    (kept here when not given)."""

    def __init__(
        self, background: Background, delay: float = DELAY, states: StateOf | None = None
    ) -> None:
        self._background = background
        self._delay = delay
        own: dict[str, ExactState] = {}
        self._state: StateOf = states or (lambda sid: own.setdefault(sid, ExactState()))

    def figure(self, session_id: str, current: Fingerprint) -> int | None:
        known = self._state(session_id).figure
        return known[1] if known is not None and known[0] == current else None

    def request(
        self, session_id: str, current: Fingerprint, run: Callable[[], Coroutine[Any, Any, Any]]
    ) -> None:
        """Schedule `run` (which calls `count`) unless the current view is already counted:
        `delay` seconds after the last request, so a burst of changes makes one count."""
        if self.figure(session_id, current) is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no running loop: nothing to run it on
            return
        state = self._state(session_id)
        state.stop()
        state.timer = loop.call_later(self._delay, self._fire, state, run)

    def _fire(self, state: ExactState, run: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        state.timer = None
        self._background.spawn(run(), "exact count")

    def forget(self, session_id: str) -> None:
        state = self._state(session_id)
        state.stop()
        state.figure = None

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
        self._state(session.session_id).figure = (before, tokens)
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
            "state": usage_state(tokens, budget, usage.auto_compact_paused, usage.request_size),
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
