"""Dispatch from protocol.py's tables: each request, command and client notification to its
handler, with params validated against the table's model and answers serialized once.

A handler is a top-level function `handler(call, args)`: `call` carries the server and the
client's `workDoneToken`, `args` is the validated params model the table names; it returns
the table's result model (a request or command) or None (a notification).
"""

from __future__ import annotations

import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from baton import protocol as p
from baton.core.errors import BatonError
from baton.core.messages import WireModel
from baton.lsp.errors import guarded
from baton.lsp.handlers.common import (
    Call,
    Handler,
    NotificationHandler,
    one_argument,
    parse,
    work_done_token,
)

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)

Json = dict[str, Any]


CommandEndpoint = Callable[[list[Any], Any], Awaitable[Json]]


def answer(expected: type[BaseModel], result: WireModel) -> Json:
    """The wire form of a handler's result, which must be the model the table names."""
    if not isinstance(result, expected):
        raise TypeError(f"handler answered {type(result).__name__}, not {expected.__name__}")
    return result.wire()


def _check(name: str, handler: Callable[..., Any], model: type[BaseModel]) -> None:
    """A handler must take the model the table pairs with `name` (caught at start-up)."""
    parameters = list(inspect.signature(handler).parameters)
    hints = typing.get_type_hints(handler)
    if len(parameters) != 2 or hints.get(parameters[1]) is not model:
        raise TypeError(f"the handler of {name} must take (call, args: {model.__name__})")


def _request(ls: BatonServer, spec: p.Request, handler: Handler) -> Callable[[Any], Any]:
    @guarded
    async def endpoint(params: Any) -> Json:
        args = parse(spec.params, params)
        token = work_done_token(params) if spec.progress else None
        return answer(spec.result, await handler(Call(ls, token), args))

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return endpoint


def _command(ls: BatonServer, spec: p.Command, handler: Handler) -> CommandEndpoint:
    @guarded
    async def endpoint(arguments: list[Any], token: Any = None) -> Json:
        args = one_argument(spec.argument, tuple(arguments))
        return answer(spec.result, await handler(Call(ls, token), args))

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return endpoint


def _notification(
    ls: BatonServer, spec: p.Notification, handler: NotificationHandler
) -> Callable[[Any], None]:
    def endpoint(params: Any) -> None:
        try:
            args = parse(spec.params, params)
        except (BatonError, ValueError) as exc:
            # a notification has nobody to answer; a bad one changes nothing
            log.info("ignored a malformed %s: %s", spec.method, type(exc).__name__)
            return
        handler(Call(ls), args)

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return endpoint


def _covers(kind: str, table: list[str], handlers: Mapping[str, Any]) -> None:
    if set(table) != set(handlers):
        missing, extra = set(table) - set(handlers), set(handlers) - set(table)
        raise RuntimeError(f"{kind} handlers do not match protocol.py: {missing=} {extra=}")


def register(
    ls: BatonServer,
    requests: Mapping[str, Handler],
    commands: Mapping[str, Handler],
    notifications: Mapping[str, NotificationHandler],
) -> None:
    """Register every table entry's endpoint; fails when a handler is missing or extra."""
    client_notifications = [n for n in p.NOTIFICATION_TABLE if n.sender == "client"]
    _covers("request", list(p.REQUESTS), requests)
    _covers("command", list(p.COMMANDS), commands)
    _covers("notification", [n.method for n in client_notifications], notifications)
    for request in p.REQUEST_TABLE:
        _check(request.method, requests[request.method], request.params)
        ls.feature(request.method)(_request(ls, request, requests[request.method]))
    for command in p.COMMAND_TABLE:
        _check(command.name, commands[command.name], command.argument)
        endpoint = _command(ls, command, commands[command.name])
        ls.protocol.command_endpoints[command.name] = endpoint
        ls.command(command.name)(_advertised(endpoint))
    for notification in client_notifications:
        handler = notifications[notification.method]
        _check(notification.method, handler, notification.params)
        ls.feature(notification.method)(_notification(ls, notification, handler))


def _advertised(endpoint: CommandEndpoint) -> Callable[..., Awaitable[Json]]:
    """The `*arguments` form pygls keeps to list the command in the server's capabilities."""

    async def command(*arguments: Any) -> Json:
        return await endpoint(list(arguments), None)

    command.__name__ = endpoint.__name__
    return command
