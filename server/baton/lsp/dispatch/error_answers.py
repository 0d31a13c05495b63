"""Error answers as they go out: a domain error without a traceback in the log, an
unexpected one as a plain internal error (its details in the log only), never the API key,
and an answer to a message whose id is unknown."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

from baton.core import redaction

log = logging.getLogger(__name__)


class ErrorAnswersProtocol(LanguageServerProtocol):
    """pygls's protocol, answering errors with no traceback, server path or secret."""

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

    def _send_response(
        self, msg_id: Any, result: Any = None, error: types.ResponseError | None = None
    ) -> None:
        # pygls answers an unexpected exception with its text and traceback (server paths,
        # perhaps a secret): the client gets a plain internal error, the log the details
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            log.error(
                "request %s failed: %s\n%s", msg_id, error.message, "".join(error.data["traceback"])
            )
            error = types.ResponseError(
                code=int(types.ErrorCodes.InternalError),
                message="internal error",
                data={"code": "internal_error"},
            )
        if error is not None and redaction.active():  # the error edge: never the key
            error = types.ResponseError(
                code=error.code, message=redaction.redact(error.message), data=_redacted(error.data)
            )
        super()._send_response(msg_id, result, error)

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        """An error response; `msg_id` None answers a message whose id is unknown."""
        if msg_id is not None:
            self._send_response(msg_id, error=error.to_response_error())
            return
        payload = {"code": error.code, "message": error.message}
        if error.data is not None:
            payload["data"] = error.data
        self._send_data({"jsonrpc": "2.0", "id": None, "error": payload})


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redaction.redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value
