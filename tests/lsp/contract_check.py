"""Every live answer of the server checked against docs/protocol.schema.json.

The test client's protocol hands each incoming message here: results of the contract's
requests and commands, the server's contract notifications, and the `data.code` of error
answers. A message the schema does not allow (a field it does not name, a wrong type, an
unknown error code) is recorded, and the harness fails the test when it closes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"
EXECUTE_COMMAND = "workspace/executeCommand"


@cache
def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return document


@cache
def _validator(kind: str, name: str, part: str) -> Draft202012Validator | None:
    entry = _document()[kind].get(name)
    if entry is None:
        return None
    return Draft202012Validator({**entry[part], "$defs": _document()["$defs"]})


def _command_of(params: Any) -> str | None:
    if isinstance(params, dict):
        command = params.get("command")
    else:
        command = getattr(params, "command", None)
    return command if isinstance(command, str) else None


class ContractCheck:
    """Checks one connection's traffic; `violations` says what broke the contract."""

    def __init__(self) -> None:
        self.sent: dict[Any, tuple[str, str | None]] = {}  # request id -> (method, command)
        self.violations: list[str] = []
        self.checked = 0

    def request_sent(self, msg_id: Any, method: str, params: Any) -> None:
        self.sent[msg_id] = (method, _command_of(params) if method == EXECUTE_COMMAND else None)

    def received(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if "method" in message and "id" not in message:
            self._check(("notifications", message["method"], "params"), message.get("params"))
            return
        if "method" in message or message.get("id") not in self.sent:
            return
        method, command = self.sent.pop(message["id"])
        if "error" in message:
            self._check_error(method, message["error"])
        elif command is not None:
            self._check(("commands", command, "result"), message.get("result"))
        else:
            self._check(("requests", method, "result"), message.get("result"))

    def _check(self, where: tuple[str, str, str], value: Any) -> None:
        validator = _validator(*where)
        if validator is None:
            return  # a standard LSP message: lsprotocol's business, not this contract's
        self.checked += 1
        for error in validator.iter_errors(value):
            path = "/".join(str(p) for p in error.absolute_path) or "(top)"
            self.violations.append(f"{where[0]} {where[1]} at {path}: {error.message}")

    def _check_error(self, method: str, error: Any) -> None:
        data = error.get("data") if isinstance(error, dict) else None
        code = data.get("code") if isinstance(data, dict) else None
        if code is not None and code not in _document()["errorCodes"]:
            self.violations.append(f"{method} answered with unknown error code {code!r}")
