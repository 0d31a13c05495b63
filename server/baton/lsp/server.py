"""The Baton language server: pygls wiring, transports (stdio, TCP, WebSocket), and what it
loads once `initialize` is answered.

This module and what it imports answer `initialize` without pydantic, the wire models or
core (`python -m baton serve` starts in about the time of a bare pygls server): the names
the server registers and advertises come from contract/names.py, and the service, the
session documents and the routes are built from lsp/backend.py at their first use, which
`load` makes right after the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

from baton import __version__
from baton.core import redaction
from baton.core.background import answer_promptly
from baton.core.one_line import OneLineFilter
from baton.lsp.dispatch.rpc import BatonProtocol, is_parse_error, make_converter
from baton.lsp.transport import framing
from baton.lsp.transport.process_memory import share_one_arena
from baton.lsp.transport.stdio import ClientOutput, InputReader

if TYPE_CHECKING:
    from baton.core.conversation.wire_model import WireModel
    from baton.core.service.service import BatonService
    from baton.lsp.dispatch.routes import Routes
    from baton.lsp.features.unreported_edits import UnreportedEdits
    from baton.lsp.session_document.publisher import SessionDocuments

log = logging.getLogger(__name__)

ServiceWork = Callable[["BatonService"], None]


class BatonServer(LanguageServer):
    """A LanguageServer whose every feature calls one `BatonService`."""

    protocol: BatonProtocol

    def __init__(self, service: BatonService | None = None) -> None:
        super().__init__(
            "baton",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=BatonProtocol,
            converter_factory=make_converter,
        )
        self._service: BatonService | None = None
        self._documents: SessionDocuments | None = None
        self._routes: Routes | None = None
        self._unreported_edits: UnreportedEdits | None = None
        self._service_work: list[ServiceWork] = []
        self._warned: set[str] = set()
        self.settings_problems: tuple[str, ...] = ()  # the ones last shown to the user
        self.exit_code = 0
        if service is not None:
            self._connect(service)

    # ---- what is loaded after `initialize` -----------------------------------------------

    def _connect(self, service: BatonService | None = None) -> BatonService:
        """The service connected to the client, and the session documents that follow its
        events (connected after the notifications, so that they come first)."""
        from baton.lsp import backend

        connected = backend.attach(self, service)
        self._service, self._documents = connected, backend.documents(self, connected)
        return connected

    @property
    def service(self) -> BatonService:
        service = self._service if self._service is not None else self._connect()
        while self._service_work:  # what `initialize` asked of it comes before anyone else
            self._service_work.pop(0)(service)
        return service

    def with_service(self, work: ServiceWork) -> None:
        """Run `work` on the service: now when it is loaded, else as soon as it is."""
        if self._service is None:
            self._service_work.append(work)
        else:
            work(self.service)

    @property
    def documents(self) -> SessionDocuments:
        """The session documents; they come with the service."""
        if self._documents is None:
            self._connect(self._service)
        assert self._documents is not None
        return self._documents

    @property
    def routes(self) -> Routes:
        if self._routes is None:
            from baton.lsp import backend

            self._routes = backend.routes(self)
        return self._routes

    @property
    def unreported_edits(self) -> UnreportedEdits:
        """The edits the editor applied and has not reported yet (features/tool_host.py)."""
        if self._unreported_edits is None:
            from baton.lsp.features.unreported_edits import UnreportedEdits

            self._unreported_edits = UnreportedEdits()
        return self._unreported_edits

    def load(self) -> None:
        """Load the service, the session documents and the routes now (each loads at its
        first use anyway): called right after `initialize` is answered. The tokenizer's
        build starts first, while the process is small (see `cl100k.build_early`), and
        lsprotocol's generated methods give back the globals they never read (on the loop's
        thread, the one that makes lsprotocol objects), before the rest is imported."""
        from baton.core.usage import cl100k
        from baton.lsp.transport import generated_globals

        cl100k.build_early()
        generated_globals.trim()
        try:
            _ = self.service, self.documents, self.routes
        except Exception:  # each use retries and answers the failure itself
            log.exception("loading the server failed")

    def ending(self) -> None:
        """The process ends (`exit`, its input closed, SIGTERM, a network client gone): work
        cancelled in a session's lane no longer waits for its thread to stop (it writes
        nothing, and a held one would hold the end forever)."""
        if self._service is not None:
            self._service.lanes.close()

    def load_after_answer(self) -> None:
        """`load` once the message being handled is answered (pygls answers `initialize`
        before the event loop runs what is scheduled now)."""
        with contextlib.suppress(RuntimeError):  # no loop: each piece loads at first use
            asyncio.get_running_loop().call_soon(self.load)

    # ---- helpers for handlers ------------------------------------------------------------

    @property
    def position_encoding(self) -> str:
        try:
            encoding = self.workspace.position_encoding
        except RuntimeError:  # before initialize
            return "utf-16"
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def notify(self, method: str, payload: WireModel) -> None:
        self.protocol.notify(method, payload.wire())

    def warn_once(self, message: str) -> None:
        """A settings problem, said once per distinct message (never a secret)."""
        if message in self._warned:
            return
        self._warned.add(message)
        message = redaction.redact(message)
        log.warning("%s", message)
        self.window_log_message(
            types.LogMessageParams(type=types.MessageType.Warning, message=message)
        )

    def report_server_error(self, error: Exception, source: Any) -> None:
        if is_parse_error(error):
            self.protocol.report_parse_error(error)
            return
        if source is FeatureRequestError:
            return  # the request's own error response already told the client
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)
        self.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Error, message=redaction.redact(f"Baton: {error}")
            )
        )

    # ---- transports ----------------------------------------------------------------------

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve one client over stdio, reading frames with Baton's own reader."""
        self._stop_event = stop_event = threading.Event()
        output = ClientOutput(stdout or sys.stdout.buffer)
        self.protocol.set_writer(output)
        read = InputReader(stdin or sys.stdin.buffer).read

        stopped = threading.Event()  # SIGTERM: a stop as Ctrl-C's

        async def serve() -> None:
            loop, task = asyncio.get_running_loop(), asyncio.current_task()
            assert task is not None
            output.on_failure = lambda: loop.call_soon_threadsafe(task.cancel)

            def stop() -> None:
                stopped.set()
                task.cancel()

            # the tasks still running are cancelled as asyncio.run ends: a reply streaming
            # keeps what arrived, as at a shutdown (the loop's close drops the handler)
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGTERM, stop)
            try:
                await framing.run_frames(read, self.protocol, stop_event)
            except asyncio.CancelledError:
                if output.failed is None and not stopped.is_set():
                    raise  # cancelled by the output's failure or SIGTERM alone
            finally:  # before asyncio.run cancels what still runs, and waits for it
                self.ending()

        try:
            asyncio.run(serve())
        except KeyboardInterrupt:
            pass
        except SystemExit as done:  # `exit`: 0 after `shutdown`, else 1 (LSP)
            self.exit_code = done.code if isinstance(done.code, int) else 0
        finally:
            told = output.told()
            if told is not None:
                log.error("%s", told[0])
                self.exit_code = told[1]
            self.shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client over TCP, behind the token (see lsp/transport/network.py)."""
        from baton.lsp.transport import network  # the stdio server never needs it

        self._stop_event = stop_event = threading.Event()
        network.serve_tcp(self, host, port, stop_event)

    def start_ws(self, host: str, port: int) -> None:
        """Serve one client over a WebSocket, behind the token and the Origin check."""
        from baton.lsp.transport import network

        self._stop_event = stop_event = threading.Event()
        network.serve_ws(self, host, port, stop_event)


def create_server(service: BatonService | None = None) -> BatonServer:
    from baton.lsp.dispatch import registry
    from baton.lsp.features import documents, settings

    server = BatonServer(service)
    registry.register(server, (*settings.FEATURES, *documents.FEATURES))
    return server


def parse_address(value: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """`HOST:PORT`, `[v6]:PORT` or a bare `PORT` (loopback) -> (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or default_host
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"invalid address {value!r}: expected HOST:PORT") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"invalid port {number} in {value!r}")
    return host, number


def configure_logging(level: str = "INFO") -> None:
    """Logs go to stderr (stdout is the wire); pygls's own chatter stays at WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(redaction.RedactingFilter())  # the API key never reaches the log
    handler.addFilter(OneLineFilter())  # a name holding a line break never splits a record
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("pygls", "websockets", "httpx", "httpx2", "httpcore", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def serve(tcp: str | None = None, ws: str | None = None, log_level: str = "INFO") -> int:
    """Run the server on stdio, or on one TCP / WebSocket address; returns an exit code."""
    share_one_arena()  # before any thread starts
    answer_promptly()
    configure_logging(log_level)
    server = create_server()
    if tcp:
        server.start_tcp(*parse_address(tcp))
    elif ws:
        server.start_ws(*parse_address(ws))
    else:
        wire = sys.stdout.buffer
        sys.stdout = sys.stderr  # a stray print must never corrupt the wire
        server.start_io(sys.stdin.buffer, wire)
    return server.exit_code
