"""JSON-RPC plumbing: raw-dict params for custom methods, and answers to malformed input."""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Any

import attrs
from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

log = logging.getLogger(__name__)


def _keep_raw(obj: dict[str, Any], cls: type[Any]) -> Any:
    # pygls turns unknown payloads into namedtuples, which renames keys that are not
    # identifiers (tool inputs may have any key); Baton validates the raw JSON itself.
    return cls(**obj)


def make_converter() -> Converter:
    """pygls's converter, except that custom methods' params and results stay plain JSON."""
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _keep_raw)
    return converter


@attrs.define
class UnreadableRequest:
    """A request whose envelope was readable but whose params were not."""

    id: Any
    method: str
    error: JsonRpcException


class BatonProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers every request, however malformed.

    Stock pygls drops a request whose params cannot be structured (the client waits
    forever) and cannot cancel a running command; both matter to an editor.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                return UnreadableRequest(data["id"], str(data["method"]), exc)
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, UnreadableRequest):
            log.warning("invalid params for %s (request %r)", message.method, message.id)
            error = JsonRpcInvalidParams(f"invalid params for {message.method}")
            error.data = {"code": "invalid_params"}
            self._send_response(message.id, error=error.to_response_error())
            return
        if not hasattr(message, "jsonrpc"):
            # valid JSON that is no JSON-RPC message at all (an array, a number, a dict
            # without "jsonrpc")
            msg_id = message.get("id") if isinstance(message, dict) else None
            self.send_error(msg_id, JsonRpcInvalidRequest("not a JSON-RPC 2.0 message"))
            return
        super().handle_message(message)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        # A domain error is an answer, not a server fault: no traceback in the log (pygls
        # logs one per failed request), and only its stable code, never its text.
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            error: JsonRpcException = future.exception()
            code = error.data.get("code") if isinstance(error.data, dict) else error.code
            log.info("request %s failed: %s", msg_id, code)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        """An error response; `msg_id` None answers a message whose id is unknown."""
        if msg_id is not None:
            self._send_response(msg_id, error=error.to_response_error())
            return
        payload = {"code": error.code, "message": error.message}
        if error.data is not None:
            payload["data"] = error.data
        self._send_data({"jsonrpc": "2.0", "id": None, "error": payload})

    def report_parse_error(self, exc: Exception) -> None:
        self.send_error(None, JsonRpcParseError(f"could not parse the message: {exc}"))

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        # A coroutine (not pygls's generator) so that $/cancelRequest cancels the command.
        handler: Callable[..., Any] | None = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(
                f"unknown command {params.command!r}", data={"code": "invalid_params"}
            )
        result = handler(*(params.arguments or []))
        if inspect.isawaitable(result):
            result = await result
        return result


def is_parse_error(exc: Exception) -> bool:
    return isinstance(exc, json.JSONDecodeError | UnicodeDecodeError)
