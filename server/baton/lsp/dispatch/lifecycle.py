"""LSP's lifecycle as the server keeps it: which messages come out of turn.

Before `initialize` (a second one included) and after `shutdown`, only `exit` is taken, and
a second `initialized` is dropped. pygls would answer nothing after `shutdown` (the client
waits forever), would initialize again (dropping the open documents and the first one's
settings) and would register the configuration again under an id the client holds.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcServerNotInitialized


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
