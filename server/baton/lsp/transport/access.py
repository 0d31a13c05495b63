"""Who may use a network server: the token for `--tcp` / `--ws`, and the WebSocket Origin check.

Any process on the machine can reach a loopback port, and any web page can open a
WebSocket to one; stdio needs neither check (whoever started the server is its client).
The token comes from env `BATON_TOKEN` or is generated at start and printed on stderr. A
client passes it as `initializationOptions.batonToken` in its first message (TCP or
WebSocket), or on the WebSocket handshake as `Authorization: Bearer <token>` or
`?token=<token>`. A WebSocket handshake whose `Origin` is not a loopback page is refused.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pygls.exceptions import JsonRpcException

from baton.contract.envelope import usable_id
from baton.contract.names import RPC_CODE, UNAUTHORIZED
from baton.core import redaction

log = logging.getLogger(__name__)

TOKEN_ENV = "BATON_TOKEN"
TOKEN_OPTION = "batonToken"
UNAUTHORIZED_RPC = RPC_CODE[UNAUTHORIZED]
LOOPBACK_HOSTS = {"localhost"}
NEEDS_TOKEN = (
    "this Baton server needs its token: send it as initializationOptions.batonToken "
    "(it is printed on the server's stderr, or set with BATON_TOKEN)"
)


def network_token() -> tuple[str, str]:
    """The token (BATON_TOKEN's, else one generated here), and the line that tells it on
    stderr once the server listens: a generated one is printed, never logged."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    token = given or secrets.token_urlsafe(24)
    redaction.remember(token)  # shown once on stderr at start, never in a log line
    return token, f"baton: using the token in {TOKEN_ENV}" if given else f"baton: token {token}"


def matches(given: Any, token: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode())


def handshake_token(authorization: str | None, path: str) -> str | None:
    """The token a WebSocket handshake carries: a Bearer header or a `token` query."""
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[len("bearer ") :].strip()
    values = parse_qs(urlsplit(path).query).get("token")
    return values[0] if values else None


def loopback_origin(origin: str) -> bool:
    """Whether a browser `Origin` is a page served from this machine's loopback."""
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    if host is None:
        return False
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost
        return False


class Refused(ConnectionError):
    """A connection that did not show the token: it is closed, the server serves on."""


class Busy(Refused):
    """A connection that showed the token while another client holds the slot."""


Answer = Callable[[Any, JsonRpcException], None]


def error_message(msg_id: Any, error: JsonRpcException) -> dict[str, Any]:
    """A JSON-RPC error response, as the protocol would send it."""
    payload: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        payload["data"] = error.data
    return {"jsonrpc": "2.0", "id": msg_id if usable_id(msg_id) else None, "error": payload}


class TokenGate:
    """Stands before the protocol on one connection: until a message shows the token,
    only an `initialize` carrying it is let through; anything else is answered
    `unauthorized` (on this connection: `answer`) and the connection closed.

    `admit` is asked when the token is shown (it gives this connection the slot, and the
    protocol its writer); False means another client holds the slot."""

    def __init__(
        self,
        protocol: Any,
        token: str,
        *,
        answer: Answer,
        admit: Callable[[], bool],
        refused: Callable[[str], None] | None = None,
        open: bool = False,
    ) -> None:
        self.protocol = protocol
        self.token = token
        self.answer = answer
        self.admit = admit
        self.refused = refused or _say_refused
        self.open = open

    @property
    def quiet(self) -> bool:
        """Input dropped before the token is said by `refused`, not by the frame reader."""
        return not self.open

    def handle_message(self, message: Any) -> None:
        envelope = message if isinstance(message, dict) else {}
        initialize = envelope.get("method") == "initialize"
        params = envelope.get("params")
        options = params.get("initializationOptions") if isinstance(params, dict) else None
        # the token never travels further (settings, logs)
        given = (
            options.pop(TOKEN_OPTION, None) if initialize and isinstance(options, dict) else None
        )
        if not self.open and initialize and matches(given, self.token):
            if not self.admit():
                raise Busy("Baton serves one client at a time")
            self.open = True
        if self.open:
            self.protocol.handle_message(message)
            return
        msg_id = envelope.get("id")
        reason = "a wrong token" if given is not None else "no token"
        self.refused(f"its first message carried {reason}")
        error = JsonRpcException(NEEDS_TOKEN, UNAUTHORIZED_RPC, {"code": UNAUTHORIZED})
        self.answer(msg_id if usable_id(msg_id) else None, error)
        raise Refused(NEEDS_TOKEN)

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        if self.open:
            self.protocol.send_error(msg_id, error)
            return
        # malformed input before the token: answered here, and the connection closed
        self.refused(f"its first input was not a message ({error.message})")
        self.answer(msg_id, error)
        raise Refused(error.message)


def _say_refused(reason: str) -> None:
    log.warning("refused a network client: %s", reason)
