"""LSP's lifecycle as the server keeps it: which messages come out of turn.

Before `initialize` (a second one included) and after `shutdown`, only `exit` is taken, and
a second `initialized` is dropped. pygls would answer nothing after `shutdown` (the client
waits forever), would initialize again (dropping the open documents and the first one's
settings) and would register the configuration again under an id the client holds. An
`exit` waits for the answer to a `shutdown` still running, and a handler cut as the server
ends is dropped quietly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from concurrent.futures import Future
from functools import partial
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcServerNotInitialized
from pygls.protocol import LanguageServerProtocol, lsp_method


class Lifecycle:
    """What of the lifecycle has been received; `out_of_turn` judges the next message."""

    def __init__(self) -> None:
        self.initialize_received = False
        self.initialized_received = False

    def out_of_turn(self, method: Any, shut_down: bool) -> JsonRpcException | None:
        """Why a message calling `method` comes out of turn, or None (a response, `exit`,
        or a message in its turn)."""
        if method is None or method == types.EXIT:
            return None  # a response, or `exit`: taken in every state
        if shut_down:
            return JsonRpcInvalidRequest("the server is shut down: only exit is accepted")
        if method == types.INITIALIZE:
            if self.initialize_received:
                return JsonRpcInvalidRequest("initialize was already received")
            return None
        if not self.initialize_received:
            return JsonRpcServerNotInitialized(
                "the server is not initialized: send initialize first"
            )
        if method == types.INITIALIZED and self.initialized_received:
            # its work (the configuration's registration, under one id, and its pull) is
            # done once: a client refuses a registration id it already holds
            return JsonRpcInvalidRequest("initialized was already received")
        return None

    def received(self, method: Any) -> None:
        """A message calling `method` was taken."""
        if method == types.INITIALIZE:
            self.initialize_received = True
        elif method == types.INITIALIZED:
            self.initialized_received = True


class LifecycleProtocol(LanguageServerProtocol):
    """pygls's protocol, with `shutdown` and `exit` kept in their order, and a handler
    cut by the server's end (`exit`, SIGTERM) ended without a traceback."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shutdown_answer: Future[Any] | None = None  # the `shutdown` request's

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        self.shutdown_answer = self._request_futures.get(self.msg_id or "")
        return (yield from super().lsp_shutdown(*args))

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """`exit` written right behind `shutdown` waits for its answer: pygls took it at
        once, exit code 1 as if no shutdown had come, and a traceback of the shutdown cut."""
        answer = self.shutdown_answer
        if answer is not None and not answer.done():
            # taken again once answered (that callback comes first); never as a handler to
            # wait for, which the shutdown cancels with every other
            take = partial(self._handle_notification, types.EXIT, *args)
            loop = asyncio.get_running_loop()
            answer.add_done_callback(lambda _: loop.call_soon_threadsafe(take))
            return
        yield from super().lsp_exit(*args)

    def _run_generator(
        self,
        future: Any,
        *,
        gen: Generator[Any, Any, Any],
        result_future: Future[Any],
    ) -> None:
        """A built-in handler whose own handler was cancelled (the server ending while
        `initialized` waited for the client's configuration) ends there: pygls read the
        cancelled result and the loop printed its CancelledError with a traceback."""
        if future is not None and future.cancelled():
            gen.close()
            result_future.cancel()  # a request is answered cancelled, a notification is done
            return
        super()._run_generator(future, gen=gen, result_future=result_future)
