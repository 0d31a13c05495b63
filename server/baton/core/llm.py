"""The model-client protocol, the API payload built from a view, and the Anthropic adapter."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import anthropic
from pydantic import ValidationError

from baton.core.errors import ApiError, ApiKeyMissing, PromptTooLong
from baton.core.messages import CONTENT_ADAPTER, ApiUsage, ContentBlock, Message, TextBlock
from baton.core.settings import Settings

log = logging.getLogger(__name__)

OnText = Callable[[str], Awaitable[None] | None]
DEFAULT_TIMEOUT = 600.0  # seconds; long replies stream for minutes
LIMITS_TIMEOUT = 10.0
KEY_ENV = "ANTHROPIC_API_KEY"
# Only these fields of each block type go to the API; anything else (imported extras,
# Baton's own bookkeeping) would be rejected as an unknown field.
API_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("type", "text", "citations", "cache_control"),
    "image": ("type", "source", "cache_control"),
    "document": ("type", "source", "title", "context", "citations", "cache_control"),
    "tool_use": ("type", "id", "name", "input", "cache_control"),
    "tool_result": ("type", "tool_use_id", "content", "is_error", "cache_control"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}
_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens?\s*>\s*(\d+)", re.IGNORECASE)
_KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_\-]{6,}")


@dataclass
class ModelReply:
    """One assistant response (or the part of it that arrived before a stop)."""

    content: list[ContentBlock]
    usage: ApiUsage = field(default_factory=ApiUsage)
    stop_reason: str | None = None
    api_message_id: str | None = None
    model: str | None = None


class ModelClient(Protocol):
    async def stream_reply(
        self,
        *,
        model: str,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        on_text: OnText | None = None,
    ) -> ModelReply:
        """Stream one response, passing text deltas to `on_text` as they arrive.

        On cancellation or a broken stream the exception carries what arrived so far
        (see `partial_reply`)."""
        ...

    async def model_limits(self, model: str) -> dict[str, int] | None:
        """The Models API's `max_input_tokens` / `max_tokens`, or None when unknown."""
        ...


# ---- partial replies ride on the exception that stopped them ------------------------------

_PARTIAL_ATTR = "baton_partial_reply"


def attach_partial(exc: BaseException, reply: ModelReply | None) -> None:
    setattr(exc, _PARTIAL_ATTR, reply)


def partial_reply(exc: BaseException) -> ModelReply | None:
    """What a stopped stream had delivered, when the client that raised `exc` recorded it."""
    reply = getattr(exc, _PARTIAL_ATTR, None)
    return reply if isinstance(reply, ModelReply) else None


# ---- the API payload ---------------------------------------------------------------------


def api_block(block: ContentBlock) -> dict[str, Any] | None:
    """A block as the API expects it, or None for blocks the API would reject."""
    raw = block.model_dump(mode="json", exclude_none=True)
    kind = str(raw.get("type"))
    fields = API_FIELDS.get(kind)
    if fields is None:
        return None
    out = {k: raw[k] for k in fields if k in raw}
    if kind == "text" and not str(out.get("text", "")).strip():
        return None  # the API refuses empty text blocks
    if kind == "thinking" and not out.get("signature"):
        return None  # an unsigned thinking block cannot be sent back
    if kind == "tool_use" and out.get("input") is None:
        out["input"] = {}
    return out


def to_api_messages(view: Sequence[Message]) -> list[dict[str, Any]]:
    """The Messages API `messages` for Baton's view of a conversation.

    Records of one streamed response (same API message id, tool results between them)
    become one assistant turn, with those tool results moved into the user turn after
    it; consecutive turns of one role are merged; in a user turn tool results come first.
    """
    turns: list[dict[str, Any]] = []
    turn_api_ids: list[str | None] = []
    for message in view:
        blocks = [b for b in (api_block(x) for x in message.content) if b is not None]
        if not blocks:
            continue
        api_id = message.api_message_id if message.role == "assistant" else None
        target = _open_response(turns, turn_api_ids, api_id)
        if target is not None:
            turns[target]["content"].extend(blocks)
            continue
        turns.append({"role": message.role, "content": blocks})
        turn_api_ids.append(api_id)
    merged: list[dict[str, Any]] = []
    for turn in turns:
        if merged and merged[-1]["role"] == turn["role"]:
            merged[-1]["content"].extend(turn["content"])
        else:
            merged.append({"role": turn["role"], "content": list(turn["content"])})
    for turn in merged:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda b: b.get("type") != "tool_result")  # stable
    return merged


def _open_response(
    turns: list[dict[str, Any]], api_ids: list[str | None], api_id: str | None
) -> int | None:
    """Index of the assistant turn of the same response that is still open, if any: the
    last assistant turn, followed by nothing but tool results."""
    if api_id is None:
        return None
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if turn["role"] == "assistant":
            return index if api_ids[index] == api_id else None
        if any(b.get("type") != "tool_result" for b in turn["content"]):
            return None
    return None


# ---- errors ------------------------------------------------------------------------------


def scrub(text: str, secret: str | None) -> str:
    """`text` with the API key (and anything shaped like one) taken out."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return _KEY_SHAPE.sub("[redacted]", text)


def map_error(exc: BaseException, secret: str | None) -> ApiError | PromptTooLong:
    """The Baton error for an SDK or transport failure (never carrying the key)."""
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        kind = str(exc.type or "error")
        message = scrub(str(exc.api_message or exc.message), secret)
        match = _TOO_LONG.search(message)
        if match or status == 413 or "prompt is too long" in message.lower():
            actual, limit = (int(match[1]), int(match[2])) if match else (None, None)
            return PromptTooLong(
                f"the prompt is too long for the model: {message}",
                actual=actual,
                limit=limit,
                status=status,
            )
        if status < 400:  # an `error` event inside a stream that had started fine
            return ApiError(
                f"the Anthropic API stopped the reply ({kind}): {message}", status=None, type=kind
            )
        return ApiError(
            f"Anthropic API error {status} ({kind}): {message}", status=status, type=kind
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ApiError("the Anthropic API timed out", status=None, type="timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return ApiError(
            f"could not reach the Anthropic API: {scrub(str(exc), secret)}",
            status=None,
            type="connection_error",
        )
    detail = scrub(f"{type(exc).__name__}: {exc}", secret)
    return ApiError(f"the reply stream broke: {detail}", status=None, type="stream_error")


# ---- the Anthropic adapter ---------------------------------------------------------------


class AnthropicClient:
    """`ModelClient` over the official SDK. The key lives only inside the SDK client."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        key = api_key or os.environ.get(KEY_ENV) or None
        self._secret = key
        self._sdk: anthropic.AsyncAnthropic | None = None
        if key:
            self._sdk = anthropic.AsyncAnthropic(
                api_key=key,
                base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=max_retries,
                timeout=timeout,
            )
        self._limits: dict[str, dict[str, int] | None] = {}
        self._limits_lock = asyncio.Lock()

    @classmethod
    def from_settings(
        cls, settings: Settings, api_key: str | None = None, **options: Any
    ) -> AnthropicClient:
        return cls(api_key, base_url=settings.resolved_base_url(), **options)

    @property
    def has_key(self) -> bool:
        return self._sdk is not None

    def __repr__(self) -> str:
        return f"AnthropicClient(has_key={self.has_key})"

    def _client(self) -> anthropic.AsyncAnthropic:
        if self._sdk is None:
            raise ApiKeyMissing(
                "no Anthropic API key: set ANTHROPIC_API_KEY or "
                "initializationOptions.anthropicApiKey"
            )
        return self._sdk

    async def aclose(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()

    async def stream_reply(
        self,
        *,
        model: str,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        on_text: OnText | None = None,
    ) -> ModelReply:
        sdk = self._client()
        options: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens}
        if system:
            options["system"] = system
        if tools:
            options["tools"] = tools
        acc = _Accumulator()
        try:
            async with sdk.messages.stream(**options) as stream:
                async for event in stream:
                    await acc.feed(event, on_text)
        except asyncio.CancelledError as exc:
            attach_partial(exc, acc.partial())
            raise
        except Exception as exc:
            if not isinstance(exc, anthropic.APIError) and not _is_transport_error(exc):
                attach_partial(exc, acc.partial())
                raise  # not the API's doing (e.g. the on_text callback failed)
            error = map_error(exc, self._secret)
            attach_partial(error, acc.partial())
            log.debug("reply failed: %s", error.message)
            raise error from None
        if acc.final is None:
            error = ApiError(
                "the reply stream ended before the response was complete",
                status=None,
                type="stream_error",
            )
            attach_partial(error, acc.partial())
            raise error
        return acc.final

    async def model_limits(self, model: str) -> dict[str, int] | None:
        if self._sdk is None:
            return None
        async with self._limits_lock:
            if model in self._limits:
                return self._limits[model]
            limits: dict[str, int] | None = None
            try:
                sdk = self._sdk.with_options(max_retries=1, timeout=LIMITS_TIMEOUT)
                info = await sdk.models.retrieve(model)
                found = {
                    name: value
                    for name in ("max_input_tokens", "max_tokens")
                    if isinstance(value := getattr(info, name, None), int) and value > 0
                }
                limits = found or None
            except Exception as exc:  # any failure: the caller falls back to its table
                log.info("model limits for %s unavailable: %s", model, map_error(exc, None))
            # cached either way: a budget is computed on every change, the lookup once
            self._limits[model] = limits
            return limits

    async def count_tokens(
        self,
        *,
        model: str,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
    ) -> int:
        """The API's own count of a prompt (the count_tokens endpoint)."""
        sdk = self._client()
        options: dict[str, Any] = {"model": model, "messages": messages}
        if system:
            options["system"] = system
        if tools:
            options["tools"] = tools
        try:
            result = await sdk.messages.count_tokens(**options)
        except anthropic.APIError as exc:
            raise map_error(exc, self._secret) from None
        return int(result.input_tokens)


def _is_transport_error(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.split(".")[0] in {"httpx", "httpx2", "httpcore", "h11"}


class _Accumulator:
    """Builds the reply from stream events and knows what a cut-off reply amounts to."""

    def __init__(self) -> None:
        self.api_message_id: str | None = None
        self.model: str | None = None
        self.usage = ApiUsage()
        self.stop_reason: str | None = None
        self.done: dict[int, ContentBlock] = {}  # finished blocks by index
        self.current = 0  # index of the block now streaming
        self.open_text: dict[int, str] = {}  # text of blocks still streaming
        self.final: ModelReply | None = None

    async def feed(self, event: Any, on_text: OnText | None) -> None:
        kind = event.type
        if kind == "message_start":
            self.api_message_id = event.message.id
            self.model = event.message.model
            self.usage = _usage(event.message.usage)
        elif kind == "content_block_start":
            self.current = event.index
            if event.content_block.type == "text":
                self.open_text[event.index] = ""
        elif kind == "text":
            self.open_text[self.current] = self.open_text.get(self.current, "") + event.text
            if on_text is not None and event.text:
                result = on_text(event.text)
                if inspect.isawaitable(result):
                    await result
        elif kind == "content_block_stop":
            self.open_text.pop(event.index, None)
            block = _to_block(event.content_block)
            if block is not None:
                self.done[event.index] = block
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason
            self.usage = self.usage.model_copy(
                update={"output_tokens": event.usage.output_tokens or 0}
            )
        elif kind == "message_stop":
            message = event.message
            blocks = [b for b in (_to_block(x) for x in message.content) if b is not None]
            self.final = ModelReply(
                content=blocks,
                usage=_usage(message.usage),
                stop_reason=message.stop_reason or self.stop_reason,
                api_message_id=message.id,
                model=message.model,
            )

    def partial(self) -> ModelReply | None:
        """Finished blocks plus the text of an unfinished one; unfinished tool calls and
        thinking are dropped (an incomplete call cannot run, unsigned thinking cannot be
        sent back). None when nothing usable arrived."""
        blocks = dict(self.done)
        for index, text in self.open_text.items():
            if text:
                blocks[index] = TextBlock(text=text)
        if not blocks:
            return None
        return ModelReply(
            content=[blocks[i] for i in sorted(blocks)],
            usage=self.usage,
            stop_reason=self.stop_reason,
            api_message_id=self.api_message_id,
            model=self.model,
        )


def _usage(raw: Any) -> ApiUsage:
    def pick(name: str) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else 0

    return ApiUsage(
        input_tokens=pick("input_tokens"),
        output_tokens=pick("output_tokens"),
        cache_creation_input_tokens=pick("cache_creation_input_tokens"),
        cache_read_input_tokens=pick("cache_read_input_tokens"),
    )


def _to_block(sdk_block: Any) -> ContentBlock | None:
    """An SDK content block as Baton's block; types Baton cannot store are dropped."""
    raw = cast(dict[str, Any], sdk_block.to_dict(mode="json", exclude_none=True))
    if raw.get("type") == "text":
        raw.pop("parsed_output", None)
    try:
        return CONTENT_ADAPTER.validate_python([raw])[0]
    except ValidationError:
        log.warning("dropped a reply block of unsupported type %r", raw.get("type"))
        return None
