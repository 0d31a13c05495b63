"""Access to the model: the API key, one client per endpoint, model limits, summarizers."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from baton.core import environment, redaction
from baton.core.background import Background
from baton.core.compaction.summary.summarizers import (
    ExtractiveSummarizer,
    Progress,
    Summarizer,
    SummaryRequest,
)
from baton.core.errors import ApiError, ApiKeyMissing, BatonError
from baton.core.model_api.model_list import ListedModel
from baton.core.service.model_catalog import ModelCatalog, configured, from_api
from baton.core.settings import Settings
from baton.core.usage.budget import ModelLimits
from baton.core.usage.estimator import Estimator

if TYPE_CHECKING:  # the SDK takes seconds to import; only what uses the key needs it
    from baton.core.compaction.summary.memory import NotesUpdater
    from baton.core.model_api.client import AnthropicClient

log = logging.getLogger(__name__)

KEY_ENV = "ANTHROPIC_API_KEY"
TIMEOUT_ENV = "BATON_API_TIMEOUT"  # seconds a request may wait on the API (default 600)
LIST_FRESH = 600.0  # seconds a Models API list is reused before it is asked for again
NO_KEY = "no Anthropic API key: set ANTHROPIC_API_KEY or initializationOptions.anthropicApiKey"
# (its value is not quoted: a URL may carry credentials)
ENV_URL = (
    "ANTHROPIC_BASE_URL in the environment is no http:// or https:// URL: set it to one, or "
    "set baton.anthropicBaseUrl"
)
# the model client's module, which imports the SDK: seconds of imports (thousands of
# modules) that would hold the event loop, so it is imported on a thread of its own
CLIENT_MODULE = "baton.core.model_api.client"


def api_timeout() -> float:
    """The API request timeout: BATON_API_TIMEOUT seconds, in (0, a day]."""
    from baton.core.model_api.client import DEFAULT_TIMEOUT

    return environment.seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT)


class ModelAccess:
    """Holds the API key (only in memory) and everything that needs it."""

    def __init__(self, background: Background, api_key: str | None = None) -> None:
        self._background = background
        self._key = environment.api_key(api_key or os.environ.get(KEY_ENV))
        redaction.remember(self._key)
        self._client: AnthropicClient | None = None
        self._client_for: tuple[str, str | None] | None = None
        self._limits: dict[str, ModelLimits] = {}
        self._pending: set[str] = set()
        self._notes: NotesUpdater | None = None
        self._listed: tuple[tuple[str, str | None], float, list[ListedModel]] | None = None
        self._importing: Future[None] | None = None
        if self._key is not None:
            self._import_client()

    @property
    def has_key(self) -> bool:
        return self._key is not None

    def set_key(self, key: str | None) -> None:
        key = environment.api_key(key)
        if key:
            redaction.remember(key)
            self._key = key
            self._import_client()

    def require_key(self) -> None:
        """Fail as `client` would without a key, without making the client."""
        if self._key is None:
            raise ApiKeyMissing(NO_KEY)

    def _import_client(self) -> None:
        """Start importing the model client (and the SDK) on a thread, once, as soon as a
        key is known: everything that uses the key needs it."""
        if self._importing is not None or CLIENT_MODULE in sys.modules:
            return
        done: Future[None] = Future()

        def run() -> None:
            try:
                importlib.import_module(CLIENT_MODULE)
            except BaseException as exc:  # given to whoever waits (`client_ready`)
                done.set_exception(exc)
            else:
                done.set_result(None)

        self._importing = done
        threading.Thread(target=run, name="model-client-import", daemon=True).start()

    async def client_ready(self) -> None:
        """Wait, without holding the event loop, until `client` can be made without
        importing the SDK on the caller's thread. Async paths that use the key await this
        first; with no key there is nothing to wait for."""
        if self._key is None:
            return
        self._import_client()
        if self._importing is not None:
            await asyncio.wrap_future(self._importing)

    def __repr__(self) -> str:  # never shows the key
        return f"ModelAccess(has_key={self.has_key})"

    def client(self, settings: Settings) -> AnthropicClient:
        """One client per key and endpoint, so connections are reused across requests."""
        if self._key is None:
            raise ApiKeyMissing(NO_KEY)
        from baton.core.model_api.client import AnthropicClient

        wanted = (self._key, settings.resolved_base_url())
        if wanted[1] is not None and not environment.is_http_url(wanted[1]):
            raise ApiError(ENV_URL)  # the setting's own value was checked as it was read
        if self._client is None or self._client_for != wanted:
            if self._client is not None:
                self._background.spawn(self._client.aclose(), "closing the old model client")
            self._client = AnthropicClient(self._key, base_url=wanted[1], timeout=api_timeout())
            self._client_for = wanted
        return self._client

    def limits(
        self, model: str, settings: Settings, on_found: Callable[[str], None]
    ) -> ModelLimits | None:
        """The Models API's figures for `model`, or None until they are known. With a key
        they are fetched once in the background; `on_found(model)` runs when they arrive."""
        if model in self._limits:
            return self._limits[model]
        if self._key is not None and model not in self._pending:
            work = self._fetch(model, settings, on_found)
            # pending only once a loop runs the fetch (a worker thread has none: asked again)
            if self._background.spawn(work, f"limits of {model}") is not None:
                self._pending.add(model)
        return None

    async def _fetch(self, model: str, settings: Settings, on_found: Callable[[str], None]) -> None:
        try:
            await self.client_ready()
            found = await self.client(settings).model_limits(model)
        finally:
            self._pending.discard(model)
        self._limits[model] = ModelLimits.from_api(found or {})
        if found:
            on_found(model)

    async def catalog(self, settings: Settings, current: str | None) -> ModelCatalog:
        """The models a picker offers: the Models API's list with a key (asked again after
        LIST_FRESH seconds), else, or when the API fails, the configured list saying why."""
        if self._key is None:
            return configured(settings, current, "no Anthropic API key")
        wanted = (self._key, settings.resolved_base_url())
        cached = self._listed
        if cached is None or cached[0] != wanted or time.monotonic() - cached[1] > LIST_FRESH:
            try:
                await self.client_ready()
                listed = await self.client(settings).list_models()
            except Exception as exc:  # any failure: the configured list, saying why
                why = exc.message if isinstance(exc, BatonError) else type(exc).__name__
                log.info("the Models API's list is unavailable: %s", why)
                return configured(settings, current, f"the Models API failed: {why}")
            if not listed:
                return configured(settings, current, "the Models API listed no models")
            cached = self._listed = (wanted, time.monotonic(), listed)
        return from_api(cached[2], settings, current)

    def summarizer(self, settings: Settings, estimator: Estimator) -> Summarizer:
        """The summarizer the settings ask for (`auto`: the API's own compaction where the
        Models API lists it, else anthropic, with a key; offline without one)."""
        name: str = settings.summarizer
        if name == "auto":
            name = "auto-server" if self.has_key else "extractive"
        if name in ("server", "auto-server"):
            from baton.core.compaction.summary.api_compaction import ServerSummarizer
            from baton.core.compaction.summary.model_summary import AnthropicSummarizer

            client = self.client(settings)
            fallback = AnthropicSummarizer(client, settings.resolved_summary_model())
            return ServerSummarizer(client, fallback, explicit=name == "server")
        if name == "anthropic":
            from baton.core.compaction.summary.model_summary import AnthropicSummarizer

            return AnthropicSummarizer(self.client(settings), settings.resolved_summary_model())
        if name == "memory":
            from baton.core.compaction.summary.memory import MemorySummarizer

            return MemorySummarizer(count_text=estimator.count_text)
        return ExtractiveSummarizer(estimator.count_text)

    def notes_updater(self, settings: Settings, estimator: Estimator) -> NotesUpdater:
        """The one updater of session notes (it knows which session it is updating);
        it asks the model with a key and builds the notes offline without one."""
        from baton.core.compaction.summary.memory import NotesUpdater

        if self._notes is None:
            self._notes = NotesUpdater(count_text=estimator.count_text)
        self._notes.client = self.client(settings) if self.has_key else None
        self._notes.model = settings.resolved_summary_model()
        return self._notes

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


class KeyMissingSummarizer:
    """Stands in for the anthropic summarizer when there is no key: each summary it is
    asked for fails with ApiKeyMissing, so a compaction that needs it fails like any other
    (and auto-compact's circuit breaker counts the failure)."""

    name = "anthropic"

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        raise ApiKeyMissing(f"the anthropic summarizer cannot run: {NO_KEY}")
