"""The model-client protocol and the Anthropic adapter (streaming, errors, model limits)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable
from typing import Any, Protocol

import anthropic

from baton.core import environment, redaction
from baton.core.errors import ApiError, ApiKeyMissing
from baton.core.model_api import compaction_request as server_compaction
from baton.core.model_api import model_list
from baton.core.model_api.api_errors import KEY_REFUSED, asked_again, broken_stream, map_error
from baton.core.model_api.api_errors import scrub as scrub
from baton.core.model_api.api_messages import to_api_messages as to_api_messages
from baton.core.model_api.body_off_loop import OffLoopBodies
from baton.core.model_api.model_list import ListedModel
from baton.core.model_api.reply_stream import ModelReply as ModelReply
from baton.core.model_api.reply_stream import OnText as OnText
from baton.core.model_api.reply_stream import ReplyBuilder
from baton.core.model_api.stream_failures import OnWait as OnWait
from baton.core.model_api.stream_failures import attach_partial, mark_asked_again, retried
from baton.core.model_api.stream_failures import partial_reply as partial_reply
from baton.core.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 600.0  # seconds; long replies stream for minutes
LIMITS_TIMEOUT = 10.0
KEY_ENV = "ANTHROPIC_API_KEY"
RETRY_COUNT = server_compaction.RETRY_COUNT


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
        thinking: dict[str, Any] | None = None,
        beta: str | None = None,
        on_wait: OnWait | None = None,
    ) -> ModelReply:
        """Stream one response, passing text deltas to `on_text` as they arrive; a failure
        asked again is told to `on_wait` before its wait (what, how long, which attempt).

        On cancellation or a broken stream the exception carries what arrived so far
        (see `partial_reply`)."""
        ...

    async def model_limits(self, model: str) -> dict[str, int] | None:
        """The Models API's `max_input_tokens` / `max_tokens`, or None when unknown."""
        ...


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
        key = environment.api_key(api_key or os.environ.get(KEY_ENV))
        redaction.remember(key)
        self._secret = key
        self._max_retries = max_retries
        self._sdk: anthropic.AsyncAnthropic | None = None
        # a key no header can carry is never sent: every request says what is wrong with it
        self._flaw = environment.key_flaw(key) if key else None
        if key and self._flaw is None:
            self._sdk = OffLoopBodies(
                api_key=key,
                base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=max_retries,
                timeout=timeout,
            )
        self._limits: dict[str, dict[str, int] | None] = {}
        self._limits_lock = asyncio.Lock()
        self._compaction: dict[str, bool | None] = {}

    @classmethod
    def from_settings(
        cls, settings: Settings, api_key: str | None = None, **options: Any
    ) -> AnthropicClient:
        return cls(api_key, base_url=settings.resolved_base_url(), **options)

    @property
    def has_key(self) -> bool:
        return self._sdk is not None or self._flaw is not None

    def __repr__(self) -> str:
        return f"AnthropicClient(has_key={self.has_key})"

    def _client(self) -> anthropic.AsyncAnthropic:
        if self._flaw is not None:
            raise ApiError(
                f"the Anthropic API key cannot be sent: it holds {self._flaw} inside it. "
                f"{KEY_REFUSED}",
                status=None,
                type="authentication_error",
            )
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
        thinking: dict[str, Any] | None = None,
        beta: str | None = None,
        on_wait: OnWait | None = None,
    ) -> ModelReply:
        # the SDK's retries are made here (stream_failures.retried), where each wait is told
        sdk = self._client().with_options(max_retries=0)
        options: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens}
        if system:
            options["system"] = system
        if tools:
            options["tools"] = tools
        if thinking is not None:
            options["thinking"] = thinking
        if beta is not None:
            options["extra_headers"] = {"anthropic-beta": beta}
        options = server_compaction.with_beta(options, messages)

        def attempt(retries: int) -> Awaitable[ModelReply]:
            # the header the SDK sends with each of its own retries
            headers = {**options.get("extra_headers", {}), RETRY_COUNT: str(retries)}
            return self._stream(sdk, {**options, "extra_headers": headers}, on_text)

        # an error event before anything arrived is asked again, as the SDK asks a 529 again
        return await retried(attempt, self._max_retries, on_wait)

    async def _stream(
        self, sdk: anthropic.AsyncAnthropic, options: dict[str, Any], on_text: OnText | None
    ) -> ModelReply:
        acc = ReplyBuilder()
        started = False  # the API answered and its events began
        try:
            async with sdk.messages.stream(**options) as stream:
                started = True
                async for event in stream:
                    await acc.feed(event, on_text)
        except asyncio.CancelledError as exc:
            attach_partial(exc, acc.partial())
            raise
        except Exception as exc:
            if exc is acc.callback_error:
                attach_partial(exc, acc.partial())
                raise  # not the API's doing: the on_text callback failed
            # the API's, the transport's, or a stream the SDK could not read (a proxy's
            # message_delta without usage): a broken stream, whatever the SDK raised
            error = broken_stream(exc, self._secret) if started else map_error(exc, self._secret)
            asked = None if started else asked_again(exc)
            if asked is not None:
                mark_asked_again(error, asked[0])
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
                # asked once: a retry would sit out the API's retry-after unsaid, before
                # the send that needs it, for a figure the table gives too
                sdk = self._sdk.with_options(max_retries=0, timeout=LIMITS_TIMEOUT)
                info = await sdk.models.retrieve(model)
                found = {
                    name: value
                    for name in ("max_input_tokens", "max_tokens")
                    if isinstance(value := getattr(info, name, None), int) and value > 0
                }
                limits = found or None
            except Exception as exc:  # any failure: the caller falls back to its table
                log.info("model limits for %s unavailable: %s", model, map_error(exc, self._secret))
            # cached either way: a budget is computed on every change, the lookup once
            self._limits[model] = limits
            return limits

    async def list_models(self) -> list[ListedModel]:
        """The Models API's list (every page); an `ApiError` when it cannot be had."""
        try:
            return await model_list.list_models(self._client())
        except anthropic.APIError as exc:
            raise map_error(exc, self._secret) from None

    async def count_tokens(
        self,
        *,
        model: str,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
    ) -> int:
        """The API's own count of a prompt (the count_tokens endpoint), asked once: a
        retry would sit out the API's retry-after unsaid, for a figure the estimate gives
        meanwhile (the caller keeps it on any failure)."""
        sdk = self._client().with_options(max_retries=0)
        options: dict[str, Any] = {"model": model, "messages": messages}
        if system:
            options["system"] = system
        if tools:
            options["tools"] = tools
        options = server_compaction.with_beta(options, messages)
        try:
            result = await sdk.messages.count_tokens(**options)
        except anthropic.APIError as exc:
            raise map_error(exc, self._secret) from None
        return int(result.input_tokens)

    # ---- compaction on demand (compaction/server.py) ----------------------------------------

    async def compact(
        self, request: server_compaction.ServerRequest, on_wait: OnWait | None = None
    ) -> dict[str, Any]:
        """The API's compaction of `request.messages` (the response as the API sent it); a
        failure asked again is told to `on_wait` before its wait, as a reply's is."""
        return await server_compaction.request_compaction(
            self._client(), self._secret, request, self._max_retries, on_wait
        )

    async def compaction_supported(self, model: str) -> bool | None:
        """Whether the Models API lists compaction for `model` (asked once, then cached)."""
        if self._sdk is None:
            return None
        if model not in self._compaction:
            found = await server_compaction.model_supports_compaction(self._sdk, model)
            self._compaction[model] = found
        return self._compaction[model]
