"""Dispatch from protocol.py's tables: each request, command and client notification to its
handler, with params validated against the table's model and answers serialized once.

A handler is a top-level function `handler(call, args)`: `call` carries the server and the
client's `workDoneToken`, `args` is the validated params model the table names; it returns
the table's result model (a request or command) or None (a notification). The server
registers every method at start (lsp/dispatch/registry.py) and their endpoints lead to the
routes built here, once `initialize` is answered; building them fails when a handler is
missing, extra or takes another model.
"""

from __future__ import annotations

import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from baton import protocol as p
from baton.core.conversation.wire_model import WireModel
from baton.core.errors import BatonError
from baton.core.memory import ReleaseAfterWork
from baton.lsp.dispatch import encoded
from baton.lsp.dispatch.writing import Encoded
from baton.lsp.features.common import (
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

RequestEndpoint = Callable[[Any], Awaitable[Json | Encoded]]  # large: its text
CommandEndpoint = Callable[[list[Any], Any], Awaitable[Json]]
NotificationEndpoint = Callable[[Any], None]


@dataclass(frozen=True)
class Routes:
    """Every name of the tables to its endpoint (raw params in, the wire's answer out)."""

    requests: Mapping[str, RequestEndpoint]
    commands: Mapping[str, CommandEndpoint]
    notifications: Mapping[str, NotificationEndpoint]


def answer(expected: type[BaseModel], result: WireModel) -> Json:
    """The wire form of a handler's result, which must be the model the table names."""
    if not isinstance(result, expected):
        raise TypeError(f"handler answered {type(result).__name__}, not {expected.__name__}")
    return result.wire()


def _check(name: str, handler: Callable[..., Any], model: type[BaseModel]) -> None:
    """A handler must take the model the table pairs with `name`."""
    parameters = list(inspect.signature(handler).parameters)
    hints = typing.get_type_hints(handler)
    if len(parameters) != 2 or hints.get(parameters[1]) is not model:
        raise TypeError(f"the handler of {name} must take (call, args: {model.__name__})")


def _request(
    ls: BatonServer, spec: p.Request, handler: Handler, release: ReleaseAfterWork
) -> RequestEndpoint:
    async def endpoint(params: Any) -> Json | Encoded:
        try:
            args = parse(spec.params, params)
            token = work_done_token(params) if spec.progress else None
            result = await handler(Call(ls, token), args)
            if isinstance(result, spec.result) and encoded.large(result):
                return await encoded.encoded(result)  # made off the event loop
            return answer(spec.result, result)
        finally:
            release.worked()

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return endpoint


def _command(
    ls: BatonServer, spec: p.Command, handler: Handler, release: ReleaseAfterWork
) -> CommandEndpoint:
    async def endpoint(arguments: list[Any], token: Any = None) -> Json:
        try:
            args = one_argument(spec.argument, tuple(arguments))
            return answer(spec.result, await handler(Call(ls, token), args))
        finally:
            release.worked()

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return endpoint


def _notification(
    ls: BatonServer, spec: p.Notification, handler: NotificationHandler
) -> NotificationEndpoint:
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


def routes(
    ls: BatonServer,
    requests: Mapping[str, Handler],
    commands: Mapping[str, Handler],
    notifications: Mapping[str, NotificationHandler],
) -> Routes:
    """Every table entry's endpoint; fails when a handler is missing, extra or mistyped."""
    client_notifications = [n for n in p.NOTIFICATION_TABLE if n.sender == "client"]
    _covers("request", list(p.REQUESTS), requests)
    _covers("command", list(p.COMMANDS), commands)
    _covers("notification", [n.method for n in client_notifications], notifications)
    for request in p.REQUEST_TABLE:
        _check(request.method, requests[request.method], request.params)
    for command in p.COMMAND_TABLE:
        _check(command.name, commands[command.name], command.argument)
    for notification in client_notifications:
        _check(notification.method, notifications[notification.method], notification.params)
    # the memory a request's transients took goes back once a burst of requests is over
    release = ReleaseAfterWork()
    return Routes(
        requests={r.method: _request(ls, r, requests[r.method], release) for r in p.REQUEST_TABLE},
        commands={c.name: _command(ls, c, commands[c.name], release) for c in p.COMMAND_TABLE},
        notifications={
            n.method: _notification(ls, n, notifications[n.method]) for n in client_notifications
        },
    )
