"""One turn of a conversation: append the prompt, make room, stream the reply, record it.

Failure rules (PROTOCOL.md `baton/session/send`):
- Bad input (empty content, nothing to continue, a reply already streaming, no API key)
  changes nothing.
- Once the user's prompt is appended it stays: it is the user's words, and the client can
  retry with `send` and no content. Errors raised after that point carry its id in
  `data.promptMessageId`.
- A reply that fails before any content arrives appends nothing. A reply cut short by
  cancellation or a broken stream is appended with what arrived, `stop_reason`
  "interrupted" and no usage (its usage would not describe what was kept); a send with no
  content then sets it aside (a rewind) and makes the reply again.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    MOVED_PREFIX,
    ContentBlock,
    Message,
    MessageInput,
    new_id,
)
from baton.core.conversation.session import Session
from baton.core.conversation.thinking_sent import STALE_PREFIX
from baton.core.errors import (
    ApiError,
    ApiKeyMissing,
    BatonError,
    InvalidParams,
    PromptTooLong,
)
from baton.core.model_api.client import ModelClient, ModelReply, OnWait
from baton.core.model_api.reply_request import request_thinking
from baton.core.settings import Settings
from baton.core.turn import recovery, too_long, tool_loop
from baton.core.turn.next_request import REPLY_MAX_TOKENS as REPLY_MAX_TOKENS
from baton.core.turn.next_request import next_request, ready_view
from baton.core.turn.prompt_input import check_continuable, check_tools, prompt_input
from baton.core.turn.tool_loop import ServerTools
from baton.core.usage.budget import ModelLimits, Usage, observe_response
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage

log = logging.getLogger(__name__)

OnDelta = Callable[[str, str], Awaitable[None] | None]

_replying: weakref.WeakSet[Session] = weakref.WeakSet()


@dataclass
class ChatContext:
    """What a turn needs besides the session. `auto` and `compact_context` are optional:
    without them the caller is responsible for auto-compacting before the turn."""

    settings: Settings
    estimator: Estimator
    client: ModelClient | None
    on_delta: OnDelta | None = None
    auto: AutoCompactor | None = None
    compact_context: Callable[[], CompactContext] | None = None
    progress: Progress | None = None
    max_tokens: int | None = None  # None: REPLY_MAX_TOKENS within the model's limits
    # called when the session changed before the model is asked (the prompt appended, an
    # auto-compaction), so a client sees those steps while it waits for the first text
    on_step: Callable[[], None] | None = None
    # the workspace tools, offered and run here when the send brings no tools of its own
    server_tools: ServerTools | None = None
    on_wait: OnWait | None = None  # told before each wait to ask the API again, and how long


@dataclass
class SendResult:
    message: Message
    usage: Usage
    set_aside: Boundary | None = None  # the rewind of a refused, or a retried, reply


async def send(
    session: Session,
    *,
    content: str | list[ContentBlock] | list[dict[str, Any]] | MessageInput | Message | None,
    tools: list[dict[str, Any]] | None,
    ctx: ChatContext,
    attachments: Sequence[Message] = (),
) -> SendResult:
    """Append `content` as the user's prompt, after its `attachments` (None: continue after
    tool results), and get the model's reply. A tool_use reply of the client's own tools is
    returned as it is (the client runs them, appends their results and calls `send` again
    with no content); with `ctx.server_tools` the tool loop runs here."""
    session.refuse_if_read_only()  # locked by another process, or a file it cannot write
    if ctx.client is None:
        raise ApiKeyMissing(
            "no Anthropic API key: set ANTHROPIC_API_KEY or initializationOptions.anthropicApiKey"
        )
    if session in _replying:
        raise InvalidParams(f"a reply is already streaming in session {session.session_id}")
    client = ctx.client
    checked_tools = check_tools(tools)
    if checked_tools is None and ctx.server_tools is not None:
        checked_tools = ctx.server_tools.definitions()
    else:
        ctx = replace(ctx, server_tools=None)  # a client with its own tools runs them
    # a prompt already made (and counted: `service/heavy.py`), or made of the content here
    prompt = content if isinstance(content, MessageInput | Message) else prompt_input(content)
    if prompt is None:
        if attachments:
            raise InvalidParams("attachments go with content: send them with a prompt")
        check_continuable(session)
    _replying.add(session)
    try:
        return await _turn(session, client, prompt, checked_tools, ctx, attachments)
    finally:
        _replying.discard(session)


async def _turn(
    session: Session,
    client: ModelClient,
    prompt: MessageInput | Message | None,
    tools: list[dict[str, Any]] | None,
    ctx: ChatContext,
    attachments: Sequence[Message],
) -> SendResult:
    # no prompt: a reply that broke is asked for again, set aside first
    prompt_id, set_aside = ready_view(session, prompt, attachments)
    if prompt_id is not None or set_aside is not None:
        _step(ctx)
    ask = functools.partial(_reply, session, client, tools, ctx)
    try:
        if ctx.server_tools is None:
            result = await ask()
        else:
            result = await tool_loop.run(session, ctx.server_tools, ask, lambda: _step(ctx))
    except BatonError as exc:
        if prompt_id is not None:
            exc.data.setdefault("promptMessageId", prompt_id)
        raise
    return replace(result, set_aside=result.set_aside or set_aside)


async def _reply(
    session: Session, client: ModelClient, tools: list[dict[str, Any]] | None, ctx: ChatContext
) -> SendResult:
    tools_tokens = ctx.estimator.count_json(tools) if tools else 0
    model = session.model or ctx.settings.model
    limits = await _limits(client, model)
    await _auto_compact(session, ctx, tools_tokens)
    _step(ctx)  # whatever auto-compact did (maybe nothing) is visible before the reply
    usage = _usage(session, ctx, tools_tokens, limits)
    too_long.check_room(usage)
    request = next_request(
        session, tools, usage, ctx.settings, model, ctx.estimator, limits, ctx.max_tokens
    )
    view, max_tokens = request.view, request.max_tokens
    body = {"model": model, "system": request.system, "messages": request.messages, "tools": tools}
    too_long.check_bytes(body)
    note_tokens = request.note_tokens  # the budget note: counted in the room, never stored

    message_id = new_id()
    streamed: list[str] = []

    async def on_text(text: str) -> None:
        if not streamed:
            _report(ctx, "Replying", None)
        streamed.append(text)
        if ctx.on_delta is not None:
            result = ctx.on_delta(message_id, text)
            if inspect.isawaitable(result):
                await result

    _report(ctx, "Waiting for the model", None)
    payload = request.payload
    if payload.omitted:
        log.debug("thinking of %d turn(s) left out: their prefix changed", len(payload.omitted))
    # a reply on a turn in progress sent back after its prefix changed, or made after the
    # budget note (which no later request sends where it stood): no later request matches
    # its prefix (that thinking goes out of them), and the meter knows it by this
    stale = payload.stale_in_progress or request.note is not None
    mark = (STALE_PREFIX if stale else "") + payload.prefix_hash
    system, messages = request.system, request.messages

    async def ask(max_tokens: int) -> ModelReply:
        setting = ctx.settings.thinking_setting()
        thinking, beta = request_thinking(model, setting, max_tokens, payload)
        return await client.stream_reply(
            model=model,
            system=system,
            messages=messages,
            tools=tools,
            max_tokens=max_tokens,
            on_text=on_text,
            thinking=thinking,
            beta=beta,
            on_wait=ctx.on_wait,
        )

    try:
        try:
            reply = await ask(max_tokens)
        except ApiError as exc:
            fit = recovery.output_fit(exc) if not streamed else None
            if fit is None:
                raise
            # the prompt's real size, and the output that fits beside it: asked once more
            recovery.learn_from_overflow(
                session, ctx.estimator, view, tools_tokens + note_tokens, fit[0]
            )
            reply = await ask(min(max_tokens, fit[1]))
    except asyncio.CancelledError as exc:
        recovery.keep_partial(session, message_id, exc, streamed, model, mark)
        raise
    except PromptTooLong as exc:
        if not too_long.over_bytes(exc):
            besides = tools_tokens + note_tokens
            recovery.learn_from_overflow(session, ctx.estimator, view, besides, exc.actual)
        raise too_long.refused(exc, body) from None
    except Exception as exc:
        recovery.keep_partial(session, message_id, exc, streamed, model, mark)
        raise

    if [m.id for m in session.view_messages()] != [m.id for m in view]:  # compacted meanwhile
        mark = MOVED_PREFIX + payload.prefix_hash  # its usage measured the view before
    message = recovery.own_api_id(session, reply.message(message_id, model, mark, note_tokens))
    session.append([message])
    observe_response(
        session, message_id, ctx.estimator, tools_tokens=tools_tokens, note_tokens=note_tokens
    )
    refused = message.stop_reason == "refusal"  # no later request may carry it
    set_aside = recovery.set_aside_refused(session, message) if refused else None
    _report(ctx, "Reply complete", 1.0)
    return SendResult(message, _usage(session, ctx, tools_tokens, limits), set_aside)


# ---- steps -------------------------------------------------------------------------------


async def _limits(client: ModelClient, model: str) -> ModelLimits | None:
    try:
        found = await client.model_limits(model)
    except Exception as exc:  # the table is a fine fallback
        log.debug("model limits unavailable: %s", type(exc).__name__)
        return None
    return ModelLimits.from_api(found) if found else None


async def _auto_compact(session: Session, ctx: ChatContext, tools_tokens: int) -> None:
    if ctx.auto is None:
        return
    context = ctx.compact_context() if ctx.compact_context is not None else None
    if context is not None:
        context = replace(context, tools_tokens=tools_tokens)
    await ctx.auto.check(session, reason="send", context=context)


def _usage(
    session: Session, ctx: ChatContext, tools_tokens: int, limits: ModelLimits | None
) -> Usage:
    paused_by = None if ctx.auto is None else ctx.auto.paused_by(session.session_id)
    return compute_usage(
        session,
        ctx.settings,
        ctx.estimator,
        tools_tokens=tools_tokens,
        auto_paused=paused_by is not None,
        api_limits=limits,
        paused_by=paused_by,
    )


def _step(ctx: ChatContext) -> None:
    if ctx.on_step is not None:
        ctx.on_step()


def _report(ctx: ChatContext, text: str, fraction: float | None) -> None:
    if ctx.progress is not None:
        ctx.progress(text, fraction)
