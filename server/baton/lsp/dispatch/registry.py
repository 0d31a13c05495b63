"""Every method the server serves, registered with pygls in one place while it starts: the
standard LSP features (lsp/features/settings.py and documents.py, as `Feature` entries)
and the names of contract/names.py (requests, commands, client notifications), whose
endpoints lead to the routes of lsp/dispatch/routes.py, which the server loads once
`initialize` is answered (or at the first call that comes before).

Registering by name keeps the wire models and core out of the `initialize` answer; the
commands and the features' options are part of it (the capabilities list them), the rest
pygls routes by name. An async handler's failures are answered as JSON-RPC errors
(`guarded`); a notification's are logged by pygls.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.contract import names
from baton.lsp.dispatch.errors import guarded
from baton.lsp.dispatch.writing import Encoded

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

Json = dict[str, Any]


@dataclass(frozen=True)
class Feature:
    """A standard LSP method: `handler(ls, params)` (sync or async) and the options its
    capability advertises, if any."""

    method: str
    handler: Callable[[BatonServer, Any], Any]
    options: Any = None


def register(ls: BatonServer, features: Iterable[Feature] = ()) -> None:
    for feature in features:
        ls.feature(feature.method, feature.options)(_standard(ls, feature))
    for method in names.REQUESTS:
        ls.feature(method)(_request(ls, method))
    for name in names.COMMANDS:
        endpoint = _command(ls, name)
        ls.protocol.command_endpoints[name] = endpoint
        ls.command(name)(_advertised(endpoint))
    for method in names.CLIENT_NOTIFICATIONS:
        ls.feature(method)(_notification(ls, method))


def _standard(ls: BatonServer, feature: Feature) -> Callable[[Any], Any]:
    handler = feature.handler
    endpoint: Callable[[Any], Any]
    if inspect.iscoroutinefunction(handler):

        @guarded
        async def answered(params: Any) -> Any:
            return await handler(ls, params)

        endpoint = answered
    else:

        def endpoint(params: Any) -> Any:
            return handler(ls, params)

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return endpoint


def _request(ls: BatonServer, method: str) -> Callable[[Any], Awaitable[Json | Encoded]]:
    @guarded
    async def endpoint(params: Any) -> Json | Encoded:  # a large answer's JSON text
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
