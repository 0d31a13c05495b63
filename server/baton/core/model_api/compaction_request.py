"""The API calls of compaction on demand: the request, its errors, the model's capability.

`AnthropicClient` delegates here; the SDK is imported only inside the functions. Error codes
come from `error.details.error_code` (Compaction on demand, "Errors").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.core.errors import ApiError, NothingToCompact, PromptTooLong
from baton.core.model_api.stream_failures import OnWait, mark_asked_again, retried

if TYPE_CHECKING:
    import anthropic

log = logging.getLogger(__name__)

BETA = "compact-2026-09-04"
LIMITS_TIMEOUT = 10.0
RETRY_COUNT = "x-stainless-retry-count"
REFUSED_BLOCK = {
    "compaction_block_misplaced",
    "compaction_signature_invalid",
    "compaction_content_mismatch",
}
UNAVAILABLE = "compaction_unavailable"
NOTHING = "compaction_nothing_to_summarize"


class ServerFallback(Exception):
    """The API's compaction cannot serve this compaction; Baton writes its own summary.
    `reason` is one sentence for the client; `quiet` marks a choice `auto` made on its own
    (no warning then)."""

    def __init__(self, reason: str, *, quiet: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.quiet = quiet


@dataclass(frozen=True)
class ServerRequest:
    """One compaction request: the summarized messages as the API takes them, with the
    conversation's own model, system prompt and tools (the summarizer reads them, and kept
    thinking stays valid only when they match)."""

    model: str
    messages: list[dict[str, Any]]
    system: str | None = None
    tools: list[dict[str, Any]] | None = None
    instructions: str | None = None
    max_tokens: int = 20_000


def with_beta(options: dict[str, Any], messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`options` with the beta header added when `messages` carry a compaction block: the
    API refuses the block on any request without it."""
    if not any(
        isinstance(block, dict) and block.get("type") == "compaction"
        for message in messages
        for block in (message.get("content") or [])
        if isinstance(message.get("content"), list)
    ):
        return options
    headers = dict(options.get("extra_headers") or {})
    betas = [b for b in str(headers.get("anthropic-beta", "")).split(",") if b.strip()]
    if BETA not in betas:
        betas.append(BETA)
    headers["anthropic-beta"] = ",".join(betas)
    return {**options, "extra_headers": headers}


async def request_compaction(
    sdk: anthropic.AsyncAnthropic,
    secret: str | None,
    request: ServerRequest,
    max_retries: int,
    on_wait: OnWait | None = None,
) -> dict[str, Any]:
    """One compaction request, asked again as a reply is (`stream_failures.retried`: the
    statuses the SDK retries, `max_retries` times, each wait told to `on_wait`) rather than
    inside the SDK, where its waits go unsaid; API errors become ServerFallback or a
    BatonError."""
    import anthropic

    from baton.core.model_api.api_errors import asked_again, map_error

    compaction: dict[str, Any] = {"type": "summarize"}
    if request.instructions:
        compaction["instructions"] = request.instructions
    options: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": request.messages,
        "betas": [BETA],
        "compaction": compaction,
    }
    if request.system:
        options["system"] = request.system
    if request.tools:
        options["tools"] = request.tools
    once = sdk.with_options(max_retries=0)

    async def attempt(retries: int) -> Any:
        try:  # the header the SDK sends with each of its own retries
            return await once.beta.messages.create(
                **options, extra_headers={RETRY_COUNT: str(retries)}
            )
        except anthropic.APIError as exc:
            error = map_error(exc, secret)
            asked = asked_again(exc)
            if asked is not None:
                mark_asked_again(error, asked[0])
            raise error from exc

    try:
        response = await retried(attempt, max_retries, on_wait)
    except (ApiError, PromptTooLong) as error:
        cause = error.__cause__
        if isinstance(cause, anthropic.APIStatusError):  # the last answer, its code read
            raise _compaction_error(cause, error) from None
        raise error from None
    return dict(response.to_dict(mode="json"))  # the fields the API sent, as it sent them


def _compaction_error(exc: anthropic.APIStatusError, mapped: Exception) -> Exception:
    code = error_code(exc.body)
    text = getattr(mapped, "message", str(mapped))
    if code == NOTHING:
        return NothingToCompact(f"the API found nothing to summarize ({code})")
    if code == UNAVAILABLE:
        return ServerFallback(
            "the API's compaction is unavailable right now (compaction_unavailable), so "
            "Baton's own summary was used"
        )
    if code in REFUSED_BLOCK:
        return ServerFallback(
            f"the API refused the summary it wrote earlier ({code}), so Baton's own summary "
            "was used"
        )
    if isinstance(mapped, PromptTooLong) or (
        isinstance(mapped, ApiError) and exc.status_code == 400
    ):
        return ServerFallback(
            f"the API's compaction refused the request ({text}), so Baton's own summary was used"
        )
    return mapped


def error_code(body: object) -> str | None:
    """`error.details.error_code` of an API error body, when it has one."""
    error = body.get("error", body) if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None


async def model_supports_compaction(sdk: anthropic.AsyncAnthropic, model: str) -> bool | None:
    """`capabilities.compaction.supported` (and `summarize.supported` when given) from the
    Models API, asked with the beta header; None when it cannot be had or says nothing."""
    try:
        # asked once: a retry would sit out the API's retry-after unsaid (Baton's own
        # summary is the fallback)
        quick = sdk.with_options(max_retries=0, timeout=LIMITS_TIMEOUT)
        info = await quick.beta.models.retrieve(model, betas=[BETA])
    except Exception as exc:
        log.info("compaction capability of %s unavailable: %s", model, type(exc).__name__)
        return None
    raw = info.to_dict(mode="json")
    capabilities = raw.get("capabilities")
    if not isinstance(capabilities, dict):
        return None
    found = capabilities.get("compaction")
    if not isinstance(found, dict):
        return False
    summarize = found.get("summarize")
    if isinstance(summarize, dict) and summarize.get("supported") is False:
        return False
    return bool(found.get("supported"))
