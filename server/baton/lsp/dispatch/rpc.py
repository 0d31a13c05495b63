"""JSON-RPC plumbing: raw-dict params for custom methods, and answers to malformed input."""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import Any
from urllib.parse import unquote

from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
    lsp_method,
)

from baton.contract.envelope import envelope_problem, usable_id
from baton.contract.names import CONTRACT_VERSION
from baton.lsp.dispatch.error_answers import ErrorAnswersProtocol
from baton.lsp.dispatch.errors import structure_problems
from baton.lsp.dispatch.lifecycle import Lifecycle, LifecycleProtocol
from baton.lsp.dispatch.writing import WritingProtocol

log = logging.getLogger(__name__)

BATCH_REFUSED = "batches are not supported: send each message on its own"


def _keep_raw(obj: dict[str, Any], cls: type[Any]) -> Any:
    # pygls turns unknown payloads into namedtuples, which renames keys that are not
    # identifiers (tool inputs may have any key); Baton validates the raw JSON itself.
    if "method" in obj and "params" not in obj:
        obj = {**obj, "params": None}  # JSON-RPC 2.0 lets a request leave out its params
    return cls(**obj)


# a cancel's notification, and the param naming what it cancels
CANCELS = {"$/cancelRequest": "id", "window/workDoneProgress/cancel": "token"}


def _unusable_cancel(message: dict[str, Any]) -> str | None:
    """The method of a cancel whose id (or progress token) names nothing (a list, an
    object: JSON-RPC's ids and LSP's tokens are numbers and strings), else None."""
    method = message.get("method")
    if method not in CANCELS or "id" in message:
        return None
    params = message.get("params")
    named = params.get(CANCELS[method]) if isinstance(params, dict) else None
    return method if isinstance(named, list | dict) else None


def _arguments_problem(message: dict[str, Any]) -> str | None:
    """Why an executeCommand request's `arguments` is no array, or None."""
    params = message.get("params")
    if message.get("method") != types.WORKSPACE_EXECUTE_COMMAND or "id" not in message:
        return None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if arguments is None or isinstance(arguments, list):
        return None
    kind = "an object" if isinstance(arguments, dict) else type(arguments).__name__
    return f"arguments must be an array (a command takes one argument object), got {kind}"


def make_converter() -> Converter:
    """pygls's converter, except that custom methods' params and results stay plain JSON."""
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _keep_raw)
    return converter


class BatonProtocol(LifecycleProtocol, ErrorAnswersProtocol, WritingProtocol):
    """LanguageServerProtocol that answers every request, however malformed.

    Stock pygls drops a request whose params cannot be structured (the client waits
    forever) and cannot cancel a running command; both matter to an editor. Commands of
    protocol.py's table get the request's `workDoneToken`, which pygls does not pass on.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command_endpoints: dict[str, Callable[[list[Any], Any], Awaitable[Any]]] = {}
        self.lifecycle = Lifecycle()

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, Any]:
        """A change to a document the client never opened is dropped: pygls would fail on it
        and tell the client an error that names a KeyError."""
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.debug("a change to a document not opened is dropped")
            return None
        return (yield from super().lsp_text_document__did_change(params))

    def structure_message(self, data: dict[str, Any]) -> Any:
        # json.loads calls this for every object, innermost first; structuring there would
        # turn a nested object that merely has a "jsonrpc" key (a tool input, say) into a
        # message. Only the whole message is structured, in handle_message.
        return data

    def handle_message(self, message: Any) -> None:
        if isinstance(message, list) and self._refuse_batch(message):
            return
        problem = envelope_problem(message)
        if problem is not None:
            # valid JSON that is no JSON-RPC 2.0 message: answered when it has a usable id
            msg_id = message.get("id") if isinstance(message, dict) else None
            usable = usable_id(msg_id)
            log.warning("invalid request (id %s): %s", msg_id if usable else "unusable", problem)
            if usable or not isinstance(message, dict) or "method" in message:
                self.send_error(msg_id if usable else None, JsonRpcInvalidRequest(problem))
            return
        shut_down = self._shutdown or self.shutdown_answer is not None  # received: no more
        refusal = self.lifecycle.out_of_turn(message.get("method"), shut_down)
        if refusal is not None:
            if "id" in message:  # a notification out of turn is dropped (LSP)
                log.info("request %r refused: %s", message["id"], refusal.message)
                self.send_error(message["id"], refusal)
            return
        if cancel := _unusable_cancel(message):  # pygls would look it up, and fail
            log.warning("dropped a %s naming no number or string", cancel)
            return
        problem = _arguments_problem(message)
        if problem is not None:  # lsprotocol would read an object's keys as the arguments
            error = JsonRpcInvalidParams(problem)
            error.data = {"code": "invalid_params", "problems": [problem]}
            self.send_error(message["id"], error)
            return
        try:
            structured = self._structure(message)
        except Exception as exc:
            # no values in the log or the answer: they would quote the message's content
            if "method" not in message:
                self._unreadable_answer(message.get("id"))
                return
            if "id" not in message:
                log.warning("dropped an unreadable %s message", message["method"])
                return  # a notification: nobody to answer
            method = str(message["method"])
            problems = structure_problems(exc)
            named = "; ".join(problems)
            log.warning("invalid params for %s (request %r): %s", method, message["id"], named)
            error = JsonRpcInvalidParams(f"invalid params for {method}: {named}")
            error.data = {"code": "invalid_params", "problems": problems}
            self.send_error(message["id"], error)
            return
        self.lifecycle.received(message.get("method"))
        super().handle_message(structured)

    def _refuse_batch(self, batch: list[Any]) -> bool:
        """A JSON-RPC batch (LSP has none): each request in it is answered with an invalid
        request under its own id, so that no client waits for an answer that never comes;
        False when it holds no request (answered as any message that is no object)."""
        ids = [
            m["id"]
            for m in batch
            if isinstance(m, dict) and isinstance(m.get("method"), str) and usable_id(m.get("id"))
        ]
        for msg_id in ids:
            self.send_error(msg_id, JsonRpcInvalidRequest(BATCH_REFUSED))
        if ids:
            log.warning("refused a batch of %d messages (%d requests)", len(batch), len(ids))
        return bool(ids)

    def _unreadable_answer(self, msg_id: Any) -> None:
        """The client answered a request of the server's with a result (or an error) that
        does not have its shape: the request fails with an internal error, where it would
        wait for ever (an edit, the configuration, a progress token the client answered
        `"ok"`, say)."""
        log.warning("the client's answer to request %r is unreadable", msg_id)
        if usable_id(msg_id):
            error = types.ResponseError(
                code=int(types.ErrorCodes.InternalError),
                message="the client's answer has not the shape the request expects",
            )
            self._handle_response(msg_id, None, error)

    def _handle_response(
        self, msg_id: Any, result: Any = None, error: types.ResponseError | None = None
    ) -> None:
        """The client's answer to a request of the server's. A request withdrawn before its
        answer came (the compaction that asked for a progress token cancelled meanwhile)
        takes nothing: pygls set the answer on it all the same, an InvalidStateError."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            log.debug("the answer to request %r came after it was withdrawn", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _structure(self, data: dict[str, Any]) -> Any:
        """The message as pygls's typed objects (what pygls's structure_message does,
        without its logging of the payload)."""
        if "id" in data:
            if "error" in data:
                return self._converter.structure(data, types.ResponseErrorMessage)
            if "method" in data:
                kind = self.get_message_type(data["method"]) or JsonRPCRequestMessage
            else:
                kind = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        else:
            kind = self.get_message_type(data.get("method", "")) or JsonRPCNotification
        return self._converter.structure(data, kind)

    def report_parse_error(self, exc: Exception) -> None:
        self.send_error(None, JsonRpcParseError(f"could not parse the message: {exc}"))

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        """pygls's answer, plus the contract's version a client checks the server against.
        The code action kinds are told only to a client that takes code action literals
        (LSP: CodeActionOptions only then); any other gets `codeActionProvider: true`."""
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        experimental = result.capabilities.experimental
        extra = experimental if isinstance(experimental, dict) else {}
        result.capabilities.experimental = {**extra, "baton": {"contractVersion": CONTRACT_VERSION}}
        code_action = getattr(params.capabilities.text_document, "code_action", None)
        literals = getattr(code_action, "code_action_literal_support", None)
        if literals is None and result.capabilities.code_action_provider is not None:
            result.capabilities.code_action_provider = True
        return result

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        # A coroutine (not pygls's generator) so that $/cancelRequest cancels the command.
        endpoint = self.command_endpoints.get(params.command)
        if endpoint is not None:  # a protocol.py command: it reports on the client's token
            return await endpoint(list(params.arguments or []), params.work_done_token)
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
