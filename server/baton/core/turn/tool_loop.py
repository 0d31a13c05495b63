"""The server's tool loop inside one send: each tool_use reply answered by the workspace
tools (one user message of results, as the API expects), then the model asked again, until
it stops calling tools, the step cap is reached or the API refuses a reply. Every tool_use
is answered, even when the turn is cancelled while a call waits for the user."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from baton.core.conversation.invariants import unanswered_tool_uses
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock
from baton.core.conversation.session import Session
from baton.core.tools.calls import CANCELLED, INTERRUPTED, NOT_RUN, answer, block
from baton.core.tools.registry import Registry, ToolContext, ToolResult


class _Replied(Protocol):
    message: Message


@dataclass
class ServerTools:
    """The tools a send runs itself: the registry, what a call gets, the kinds of call the
    user allowed for the session, the cap on rounds."""

    registry: Registry
    context: ToolContext
    allowed: set[str] = field(default_factory=set)
    max_steps: int = 25
    on_call: Callable[[ToolUseBlock], None] | None = None  # a call about to be answered
    on_result: Callable[[str, ToolResult], None] | None = None  # tool_use id, its result

    def definitions(self) -> list[dict[str, Any]]:
        return self.registry.definitions()


# stop reasons of a reply whose output ran out: a tool_use that ends it was cut mid-input
CUT_SHORT = frozenset({"max_tokens", "model_context_window_exceeded"})


def cut_call_text(stop_reason: str) -> str:
    return (
        f"{NOT_RUN}the reply reached its output limit ({stop_reason}) while writing this "
        "call, so its input is incomplete. Make the call again with less input (split a "
        "long text into several smaller edits)."
    )


def cut_call(message: Message) -> ToolUseBlock | None:
    """The call a reply was cut in (the API ends a tool_use whose input ran out of output
    tokens with what it had: the SDK reads the partial JSON, an unfinished string left
    out), which must not run: its input is not what the model meant."""
    if message.stop_reason not in CUT_SHORT or not message.content:
        return None
    last = message.content[-1]
    return last if isinstance(last, ToolUseBlock) else None


REFUSED = (
    f"{NOT_RUN}the API refused this reply (stop_reason refusal) and stopped it, so its calls "
    "are not the model's finished work."
)


def loop_answers(blocks: list[ToolResultBlock]) -> Message:
    """The user message of the loop's answers, marked as the loop's (`tool_loop`): a replay
    tells its calls as the loop told them, whatever a result says."""
    return Message(role="user", content=list(blocks), tool_loop=True)


def step_limit_text(cap: int) -> str:
    return (
        f"{NOT_RUN}this turn reached its limit of {cap} tool rounds (baton.tools.maxSteps). "
        "Tell the user what is done and what is left; they can send again to go on."
    )


R = TypeVar("R", bound=_Replied)


async def run(
    session: Session,
    tools: ServerTools,
    reply: Callable[[], Awaitable[R]],
    on_step: Callable[[], None],
) -> R:
    """`reply()` until a reply calls no tool; each round's results appended before the next."""
    result = await reply()
    rounds = 0
    while _calls(result.message):
        rounds += 1
        # refused: asked again, it is refused again; its calls were answered as the reply
        # left the view (recovery.set_aside_refused), else they are answered here
        if result.message.stop_reason == "refusal":
            _append_results(session, result.message, tools, lambda _: REFUSED)
            on_step()
            return result
        if rounds > tools.max_steps:
            _append_results(
                session, result.message, tools, lambda _: step_limit_text(tools.max_steps)
            )
            on_step()
            return result
        on_step()  # the reply and its calls are seen while they run (one may ask the user)
        await _answer_round(session, result.message, tools)
        on_step()
        result = await reply()
    return result


def _calls(message: Message) -> bool:
    return message.role == "assistant" and bool(message.tool_uses())


async def _answer_round(session: Session, message: Message, tools: ServerTools) -> None:
    results: dict[str, ToolResult] = {}
    cut = cut_call(message)
    started: set[str] = set()
    applying: set[str] = set()  # edits handed to the editor: stopped, they may still apply
    try:
        for use in message.tool_uses():
            started.add(use.id)
            if tools.on_call is not None:
                tools.on_call(use)
            if use is cut:
                text = cut_call_text(str(message.stop_reason))
                found = ToolResult(text, is_error=True, summary=text, status="failed")
            else:
                found = await answer(use, tools.registry, tools.context, tools.allowed, applying)
            results[use.id] = found
            if tools.on_result is not None:
                tools.on_result(use.id, found)
    except asyncio.CancelledError:

        def told(use_id: str) -> str:
            return INTERRUPTED if use_id in applying else CANCELLED

        _append_results(session, message, tools, told, results, started)
        raise
    _append_results(session, message, tools, lambda _: CANCELLED, results, started)


def _append_results(
    session: Session,
    message: Message,
    tools: ServerTools,
    missing: Callable[[str], str],
    results: dict[str, ToolResult] | None = None,
    started: set[str] | None = None,
) -> None:
    """One user message answering every call of `message` still open in the view. A call
    answered here without running (the turn stopped, the step cap, a refused reply) is
    told as a call that ran is, its start (unless `started` says it was told) then its
    result: a front end showing the calls live would otherwise keep one running, or never
    show it."""
    found = results or {}
    open_ids = {u.id for u in unanswered_tool_uses(session.view_messages())}
    blocks = []
    for use in message.tool_uses():
        if use.id not in open_ids:
            continue
        result = found.get(use.id)
        if result is None:
            result = ToolResult(missing(use.id), is_error=True, status="failed")
            if tools.on_call is not None and use.id not in (started or set()):
                tools.on_call(use)
            if tools.on_result is not None:
                tools.on_result(use.id, result)
        blocks.append(block(use.id, result))
    if blocks:
        session.append([loop_answers(blocks)])
