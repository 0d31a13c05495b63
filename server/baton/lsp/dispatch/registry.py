"""The contract's names registered with pygls while the server starts: every request,
command and client notification of protocol_names.py, each endpoint leading to the routes
of lsp/dispatch.py, which the server loads once `initialize` is answered (or at the first
call that comes before).

Registering by name keeps the wire models and core out of the `initialize` answer; the
commands are part of it (the capabilities list them), the rest pygls routes by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from baton.contract import names
from baton.lsp.dispatch.errors import guarded

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

Json = dict[str, Any]


def register(ls: BatonServer) -> None:
    for method in names.REQUESTS:
        ls.feature(method)(_request(ls, method))
    for name in names.COMMANDS:
        endpoint = _command(ls, name)
        ls.protocol.command_endpoints[name] = endpoint
        ls.command(name)(_advertised(endpoint))
    for method in names.CLIENT_NOTIFICATIONS:
        ls.feature(method)(_notification(ls, method))


def _request(ls: BatonServer, method: str) -> Callable[[Any], Awaitable[Json]]:
    @guarded
    async def endpoint(params: Any) -> Json:
        return await ls.routes.requests[method](params)

    endpoint.__name__ = endpoint.__qualname__ = method
    return endpoint


def _command(ls: BatonServer, name: str) -> Callable[[list[Any], Any], Awaitable[Json]]:
    @guarded
    async def endpoint(arguments: list[Any], token: Any = None) -> Json:
        return await ls.routes.commands[name](arguments, token)

    endpoint.__name__ = endpoint.__qualname__ = name
    return endpoint


def _notification(ls: BatonServer, method: str) -> Callable[[Any], None]:
    def endpoint(params: Any) -> None:
        ls.routes.notifications[method](params)

    endpoint.__name__ = endpoint.__qualname__ = method
    return endpoint


def _advertised(
    endpoint: Callable[[list[Any], Any], Awaitable[Json]],
) -> Callable[..., Awaitable[Json]]:
    """The `*arguments` form pygls keeps to list the command in the server's capabilities."""

    async def command(*arguments: Any) -> Json:
        return await endpoint(list(arguments), None)

    command.__name__ = endpoint.__name__
    return command
