"""Baton's domain errors as ACP (JSON-RPC) errors: the stable code in `data.code`, the text
without secrets, never a traceback."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from acp import RequestError

from baton.contract.names import REQUEST_FAILED_RPC, RPC_CODE
from baton.core import redaction
from baton.core.conversation.request_bytes import MEDIA_ADVICE
from baton.core.errors import ApiKeyMissing, BatonError, PromptTooLong
from baton.core.memory import ReleaseAfterWork

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

AUTH_REQUIRED = -32000  # ACP's "authentication required": the client offers its auth methods
REQUEST_CANCELLED = -32800  # ACP's (and LSP's) "request cancelled"
INVALID_PARAMS = -32602
QUOTE_CHARS = 1_000  # of a text an error answer carries: a longer one keeps its start and end
QUOTE_HEAD, QUOTE_TAIL = 700, 200
QUOTED_ITEMS = 20  # of a list in an error's data (the schema's problems, one per field)


def quoted(value: Any) -> Any:
    """An error's message or data within bounds: a text past QUOTE_CHARS keeps its start
    and end (a sentence quoting a value of megabytes still names it and says why), a list
    its first QUOTED_ITEMS, and the schema's problems leave out the `input` each quotes
    whole (the block, or the request's value, refused)."""
    if isinstance(value, str):
        if len(value) <= QUOTE_CHARS:
            return value
        left_out = len(value) - QUOTE_HEAD - QUOTE_TAIL
        return f"{value[:QUOTE_HEAD]} … [{left_out:,} characters left out] … {value[-QUOTE_TAIL:]}"
    if isinstance(value, dict):
        return {k: quoted(v) for k, v in value.items() if k != "input"}
    if isinstance(value, list):
        return [quoted(v) for v in value[:QUOTED_ITEMS]]
    return value


def invalid(message: str, **data: object) -> RequestError:
    """An `invalid_params` error that changed nothing."""
    return RequestError(INVALID_PARAMS, message, {"code": "invalid_params", **data})


def cancelled(message: str) -> RequestError:
    """A request the client's `session/cancel` or `session/close` stopped before its
    answer (a load's replay): ACP's "request cancelled", not a request that was wrong."""
    return RequestError(REQUEST_CANCELLED, message, {"code": "cancelled"})


# what to do about a conversation too long to send, as an agent panel can do it (the core's
# advice names the LSP face's request and code action)
ACP_ADVICE = (
    "Compact the conversation (/compact) or start a new session, then send the prompt "
    "again to continue."
)
# a request over the API's 32 MB: the span holding its images, as a client of ACP compacts it
ACP_MEDIA_ADVICE = (
    "Compact the span of the conversation holding them (/compact, or /compact-up-to a "
    "message after them: a summary keeps no image or document) or start a new session, "
    "then send the prompt again to continue"
)

# where an agent's key comes from (its auth method, `env_var`): not the LSP face's options
ACP_NO_KEY = (
    "no Anthropic API key: set ANTHROPIC_API_KEY in the agent's environment, then try again."
)


# where an agent's endpoint is set: its --settings file takes the key without the editor's
# `baton.` (a key that is none of its own is ignored), not the editor's setting
EDITOR_URL_SETTING = "set baton.anthropicBaseUrl"
ACP_URL_SETTING = "set anthropicBaseUrl in the agent's --settings file"


def told(exc: BatonError) -> str:
    """An error's text as an agent panel shows it: without secrets, and with what to do as
    an agent's client does it (the core's words name the editor's ways)."""
    if isinstance(exc, ApiKeyMissing):
        return ACP_NO_KEY
    text = redaction.redact(exc.message)
    if isinstance(exc, PromptTooLong):
        from baton.core.turn.too_long import ADVICE

        text = text.replace(ADVICE, ACP_ADVICE).replace(MEDIA_ADVICE, ACP_MEDIA_ADVICE)
    return text.replace(EDITOR_URL_SETTING, ACP_URL_SETTING)


def as_request_error(exc: BatonError) -> RequestError:
    data = {"code": exc.code, **{k: v for k, v in exc.data.items() if v is not None}}
    if isinstance(exc, ApiKeyMissing):
        return RequestError(AUTH_REQUIRED, told(exc), data)
    return RequestError(RPC_CODE.get(exc.code, REQUEST_FAILED_RPC), told(exc), data)


RELEASE = ReleaseAfterWork()  # one per process: the memory a burst of requests took goes back


def guarded(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """A handler whose Baton errors reach the client as ACP errors, and whose unexpected
    failures are logged here and told as an internal error with no detail."""

    @functools.wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        answering: set[asyncio.Task[Any]] | None = getattr(args[0], "answering", None)
        task = asyncio.current_task()
        if answering is not None and task is not None:  # what its input's end waits for
            answering.add(task)
        try:
            return await handler(*args, **kwargs)
        except RequestError:
            raise
        except BatonError as exc:
            raise as_request_error(exc) from None
        except Exception:
            log.exception("%s failed", handler.__name__)
            raise RequestError(-32603, "Internal error", {"code": "internal_error"}) from None
        finally:
            if answering is not None and task is not None:
                answering.discard(task)
            RELEASE.worked()

    return run
