"""Turning domain errors into JSON-RPC errors whose `data.code` is the stable Baton code.

Imported while the server answers `initialize`, so pydantic is not: a ValidationError can
only exist once pydantic is loaded, and it is recognised through `sys.modules`."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeGuard, TypeVar

from cattrs.errors import ClassValidationError, IterableValidationError
from pygls.exceptions import JsonRpcException

from baton.contract.names import REQUEST_FAILED_RPC, RPC_CODE
from baton.core.errors import BatonError

if TYPE_CHECKING:
    from pydantic import ValidationError

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


QUOTE_CHARS = 1_000  # of a text an error answer carries (as baton acp's answers keep it)
QUOTE_HEAD, QUOTE_TAIL = 700, 200


def bounded(text: str) -> str:
    """An error's text within bounds: past QUOTE_CHARS it keeps its start and end, so a
    sentence quoting an id of a megabyte still names it and says why."""
    if len(text) <= QUOTE_CHARS:
        return text
    left_out = len(text) - QUOTE_HEAD - QUOTE_TAIL
    return f"{text[:QUOTE_HEAD]} … [{left_out:,} characters left out] … {text[-QUOTE_TAIL:]}"


def _rpc_code(code: str) -> int:
    return RPC_CODE.get(code, REQUEST_FAILED_RPC)


def is_validation_error(exc: BaseException) -> TypeGuard[ValidationError]:
    """Whether `exc` is pydantic's ValidationError (False while pydantic is not loaded)."""
    pydantic_core = sys.modules.get("pydantic_core")
    return pydantic_core is not None and isinstance(exc, pydantic_core.ValidationError)


def field_problems(exc: ValidationError, data: Any = None, limit: int = 5) -> list[str]:
    """One line per problem, naming the field path as the client spelled it
    (`messages.0.content.0.text: Field required`).

    pydantic's locations also name union members (`str`, `list[...]`, a block's tag); with
    the input at hand only the keys and indexes it really has are kept, and a member that
    did not apply ("Input should be a valid string" for a list) is dropped while a more
    telling problem remains."""
    found: list[tuple[str, bool, str]] = []
    for err in exc.errors():
        path, guessed = _path(err["loc"], data)
        found.append((path or "params", guessed and err["type"].endswith("_type"), err["msg"]))
    telling = [path for path, noise, _ in found if not noise]

    def explained(path: str) -> bool:  # a problem at or under `path` says more
        return any(t == path or t.startswith(f"{path}.") for t in telling)

    text = [f"{path}: {msg}" for path, noise, msg in found if not (noise and explained(path))]
    return list(dict.fromkeys(text))[:limit]


def _path(loc: tuple[int | str, ...], data: Any) -> tuple[str, bool]:
    """(the dotted path, whether a union member's label was skipped)."""
    if data is None:
        parts = [str(part) for part in loc if "[" not in str(part)]
        return ".".join(parts), len(parts) != len(loc)
    kept: list[str] = []
    skipped = False
    here = data
    for n, part in enumerate(loc):
        present = (isinstance(here, dict) and part in here) or (
            isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here)
        )
        missing_field = n == len(loc) - 1 and isinstance(here, dict) and isinstance(part, str)
        if not (present or missing_field):
            skipped = True  # a union member's label, not a key of the input
            continue
        if present:
            here = here[part]
        kept.append(str(part))
    return ".".join(kept), skipped


def structure_problems(exc: BaseException, limit: int = 5) -> list[str]:
    """One line per field of an LSP message that lsprotocol could not read, its path as the
    protocol spells it (`params.processId: a value of the wrong type`); never its value,
    which would quote the message's content (a map's keys, a URI, neither)."""
    found: list[str] = []

    def walk(exc: BaseException, path: str) -> None:
        if isinstance(exc, ClassValidationError):
            with_notes, without = exc.group_exceptions()
            for sub, note in with_notes:
                walk(sub, f"{path}.{_camel(note.name)}")
            for sub in without:
                walk(sub, path)
        elif isinstance(exc, IterableValidationError):
            items, rest = exc.group_exceptions()
            for sub, item in items:
                walk(sub, f"{path}.{item.index}")
            for sub in rest:
                walk(sub, path)
        else:
            where = path.removeprefix(".") or "params"
            found.append(f"{where}: missing" if isinstance(exc, KeyError) else f"{where}: {WRONG}")

    walk(exc, "")
    return list(dict.fromkeys(found))[:limit] or [f"params: {WRONG}"]


WRONG = "a value of the wrong type"


def _camel(name: str) -> str:
    """An lsprotocol attribute's name on the wire (the rule of lsprotocol's converter)."""
    first, *rest = name.removesuffix("_").split("_")
    return first + "".join(part.title() for part in rest)


def to_rpc_error(exc: BaseException) -> JsonRpcException:
    """The JSON-RPC error a client sees for `exc` (never a traceback, never a secret)."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, BatonError):
        # a field with no value is left out, as in every answer (never sent as null)
        data = {k: v for k, v in exc.data.items() if v is not None and _is_json(v)}
        message = bounded(exc.message)
        if exc.code == "invalid_params" and "problems" not in data:
            data["problems"] = [message]  # every invalid_params lists what was wrong
        return JsonRpcException(message, _rpc_code(exc.code), {**data, "code": exc.code})
    if is_validation_error(exc):
        problems = field_problems(exc)
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
        except (BatonError, JsonRpcException) as exc:
            raise to_rpc_error(exc) from None
        except Exception as exc:
            if is_validation_error(exc):
                raise to_rpc_error(exc) from None
            log.exception("handler %s failed", getattr(fn, "__name__", "?"))
            raise to_rpc_error(exc) from None

    return wrapper


def _is_json(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)
