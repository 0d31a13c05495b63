"""Turning domain errors into JSON-RPC errors whose `data.code` is the stable Baton code."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from lsprotocol.types import ErrorCodes, LSPErrorCodes
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException

from baton.core.errors import BatonError

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def _rpc_code(code: str) -> int:
    if code == "invalid_params":
        return int(ErrorCodes.InvalidParams)
    if code == "internal_error":
        return int(ErrorCodes.InternalError)
    return int(LSPErrorCodes.RequestFailed)


def to_rpc_error(exc: BaseException) -> JsonRpcException:
    """The JSON-RPC error a client sees for `exc` (never a traceback, never a secret)."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, BatonError):
        data = {k: v for k, v in exc.data.items() if _is_json(v)}
        return JsonRpcException(exc.message, _rpc_code(exc.code), {**data, "code": exc.code})
    if isinstance(exc, ValidationError):
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'params'}: {err['msg']}"
            for err in exc.errors()[:5]
        ]
        return JsonRpcException(
            "invalid params: " + "; ".join(problems),
            _rpc_code("invalid_params"),
            {"code": "invalid_params", "problems": problems},
        )
    return JsonRpcException(
        f"internal error: {type(exc).__name__}",
        _rpc_code("internal_error"),
        {"code": "internal_error"},
    )


def guarded(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Wrap a handler: domain errors become JSON-RPC errors, nothing else escapes."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except asyncio.CancelledError:
            raise
        except (BatonError, ValidationError, JsonRpcException) as exc:
            raise to_rpc_error(exc) from None
        except Exception as exc:
            log.exception("handler %s failed", getattr(fn, "__name__", "?"))
            raise to_rpc_error(exc) from None

    return wrapper


def _is_json(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)
