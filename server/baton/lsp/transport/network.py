"""The network transports: one client at a time over TCP or a WebSocket, behind the token.

The server has one protocol, so it serves one client: while that client is connected,
further connections are closed at once (their traffic would otherwise take over the first
client's). Until a connection shows the token (see `access`) it only waits for the slot,
bounded in time and number (see `admission`); one that never shows it is closed without
taking the slot or ending the server; the first client that does is served until it
leaves, and then the server ends, as on stdio.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from baton.lsp.transport import access, framing
from baton.lsp.transport.admission import Admission, Waiting
from baton.lsp.transport.websocket_io import WebSocketWriter, message_limit, run_websocket_messages

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection
    from websockets.http11 import Request, Response

    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)

TRY_AGAIN_LATER = 1013  # WebSocket close code: the server is busy with another client
POLICY_VIOLATION = 1008  # WebSocket close code: no token
BUSY = "Baton serves one client at a time"


def serve_tcp(server: BatonServer, host: str, port: int, stop_event: threading.Event) -> None:
    """Serve one client over TCP; says on stderr which port it bound (port 0 = any)."""
    token, told = access.network_token()
    admission = Admission()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if admission.served:
            _turned_away(admission, peer)
            await _close(writer)
            return
        waiting = admission.arrive(writer.transport.abort, peer)
        # before the token, a frame is at most the size an initialize needs
        decoder = framing.FrameDecoder(framing.MAX_BEFORE_TOKEN)

        def admit() -> bool:
            if not admission.admit(waiting):
                return False
            decoder.max_length = framing.MAX_CONTENT_LENGTH
            server.protocol.set_writer(writer)
            return True

        def answer(msg_id: Any, error: JsonRpcException) -> None:
            body = json.dumps(access.error_message(msg_id, error)).encode()
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

        gate = access.TokenGate(
            server.protocol, token, answer=answer, admit=admit, refused=admission.refused
        )
        try:
            await framing.run_frames(framing.stream_reader(reader), gate, stop_event, decoder)
        except access.Busy:
            _turned_away(admission, peer)
        except access.Refused:
            pass  # said when refused
        except ConnectionError as exc:  # a client that vanished (reset) ends the session
            if gate.open:
                log.info("client connection lost: %s", exc)
        except asyncio.CancelledError:
            # the server is closing; returning (not re-raising) keeps asyncio's
            # connection callback from logging a traceback for the cancelled task
            pass
        except SystemExit as done:  # `exit` ends the process: with this code, quietly
            server.exit_code = done.code if isinstance(done.code, int) else 0
        finally:
            admission.leave(waiting)
            if gate.open or stop_event.is_set():
                admission.say_counts()
                server.ending()
                server.shutdown()  # type: ignore[no-untyped-call]
            else:  # never let in: the server serves on
                await _close(writer)

    async def listen() -> Any:
        return await asyncio.start_server(connection, host, port)

    _serve(server, listen, "tcp", (host, port), told)


def serve_ws(server: BatonServer, host: str, port: int, stop_event: threading.Event) -> None:
    """Serve one client over a WebSocket; says on stderr which port it bound."""
    from websockets.asyncio.server import ServerConnection, serve

    token, told = access.network_token()
    admission = Admission()

    class Connection(ServerConnection):
        """A WebSocket connection that waits for the token from its accept on: its
        handshake counts against the same time and cap as its first message."""

        waiting: Waiting | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            close = getattr(transport, "abort", transport.close)
            self.waiting = admission.arrive(close, transport.get_extra_info("peername"))

        def connection_lost(self, exc: Exception | None) -> None:
            if self.waiting is not None:
                admission.leave(self.waiting)
            super().connection_lost(exc)

    def check(connection: ServerConnection, request: Request) -> Response | None:
        origin = request.headers.get("Origin")
        if origin is not None and not access.loopback_origin(origin):
            log.warning("refused a WebSocket handshake from origin %r", origin[:100])
            return connection.respond(403, "Baton accepts WebSocket pages from loopback only\n")
        given = access.handshake_token(request.headers.get("Authorization"), request.path)
        if given is not None and not access.matches(given, token):
            log.warning("refused a WebSocket handshake: a wrong token")
            return connection.respond(401, access.NEEDS_TOKEN + "\n")
        return None

    async def connection(websocket: ServerConnection) -> None:
        waiting = websocket.waiting if isinstance(websocket, Connection) else None
        writer = WebSocketWriter(websocket)

        def admit() -> bool:
            if waiting is None or not admission.admit(waiting):
                return False
            message_limit(websocket, framing.MAX_CONTENT_LENGTH)  # the token shown
            server.protocol.set_writer(writer, include_headers=False)
            return True

        def answer(msg_id: Any, error: JsonRpcException) -> None:
            writer.write(json.dumps(access.error_message(msg_id, error)).encode())

        request = websocket.request
        shown = request is not None and access.matches(
            access.handshake_token(request.headers.get("Authorization"), request.path), token
        )
        if admission.served or (shown and not admit()):
            if waiting is not None:
                admission.leave(waiting)
            _turned_away(admission, websocket.remote_address)
            await websocket.close(TRY_AGAIN_LATER, BUSY)
            return
        gate = access.TokenGate(
            server.protocol,
            token,
            answer=answer,
            admit=admit,
            refused=admission.refused,
            open=shown,
        )
        try:
            await run_websocket_messages(websocket, gate, stop_event)
        except access.Busy:
            _turned_away(admission, websocket.remote_address)
            await websocket.close(TRY_AGAIN_LATER, BUSY)
        except access.Refused:
            await writer.drain()
            await websocket.close(POLICY_VIOLATION, "Baton needs its token")
        except asyncio.CancelledError:
            pass  # the server is closing (see serve_tcp)
        finally:
            if waiting is not None:
                admission.leave(waiting)
            if gate.open or stop_event.is_set():
                admission.say_counts()
                server.ending()
                server.shutdown()  # type: ignore[no-untyped-call]

    async def listen() -> Any:
        return await serve(
            connection,
            host,
            port,
            # before the token, a message is at most the size an initialize needs (the
            # library reads a whole message before Baton sees it): raised on admission
            max_size=framing.MAX_BEFORE_TOKEN,
            process_request=check,
            create_connection=Connection,
            open_timeout=admission.timeout,
        )

    _serve(server, listen, "ws", (host, port), told)


def _turned_away(admission: Admission, peer: Any) -> None:
    """Said as the closes of waiting connections are: once, then as counts (a scanner's
    connections while the client is served would be a line each)."""
    admission.note(f"refused a connection from {_peer(peer)}", "refused {} more connections", BUSY)


def _serve(
    server: BatonServer,
    listen: Callable[[], Awaitable[Any]],
    scheme: str,
    address: tuple[str, int],
    told: str,
) -> None:
    async def main() -> None:
        try:
            listening = await listen()
        except OSError as exc:  # a name that does not resolve, a port taken: one line
            raise OSError(exc.errno, f"cannot listen on {_shown(*address)}: {_why(exc)}") from None
        server._server = listening
        bound = listening.sockets[0].getsockname()
        print(told, file=sys.stderr)
        # the port matters to whoever started us with port 0
        print(f"baton: listening on {scheme}://{_shown(bound[0], bound[1])}", file=sys.stderr)
        sys.stderr.flush()
        async with listening:
            with contextlib.suppress(asyncio.CancelledError):
                await listening.serve_forever()

    asyncio.run(main())


def _shown(host: str, port: int) -> str:
    """`host:port` as a URL holds it: an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _why(exc: OSError) -> str:
    """The cause of a failed listen in the OS's words (asyncio wraps a bind's error in a
    sentence of its own, which names the address again)."""
    if isinstance(exc, socket.gaierror) or not exc.errno or exc.errno < 0:
        return exc.strerror or str(exc)
    return os.strerror(exc.errno)


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


def _peer(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address or "an unknown peer")
