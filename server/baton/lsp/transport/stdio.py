"""The stdio server's two ends. Its input is read on a daemon thread of its own, so that
a read waiting for the client never holds the process at its end (Ctrl-C, the output
lost): a pool's thread would be joined at exit and wait for input that may never come.
Its output ends the server at the first write it refuses: pygls's writer lets the error
go, reports it to the client over the output that just failed (a full disk repeats that
to the recursion limit) or logs each answer's traceback when the client went away, and
the server goes on reading."""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import BinaryIO

from pygls.io_ import StdoutWriter

from baton.contract.output_lost import output_lost
from baton.lsp.transport.framing import CHUNK

Request = tuple[asyncio.AbstractEventLoop, "asyncio.Future[bytes]"]


class InputReader:
    """Chunks of a blocking binary stream (whatever is available), each read on the
    reader's daemon thread when `read` is awaited."""

    def __init__(self, stream: BinaryIO) -> None:
        self._read_some = _reading(stream)
        self._requests: queue.SimpleQueue[Request] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="baton-stdin", daemon=True).start()

    def read(self) -> Awaitable[bytes]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        self._requests.put((loop, future))
        return future

    def _serve(self) -> None:
        while True:
            loop, future = self._requests.get()
            error: Exception | None = None
            try:
                data = self._read_some(CHUNK)
            except OSError as exc:  # an input that cannot be read (`0>file`) ends the server
                reason = f"standard input cannot be read: {exc.strerror or exc}"
                data, error = b"", OSError(exc.errno, reason)
            except Exception as exc:  # the awaiting task's
                data, error = b"", exc
            try:
                loop.call_soon_threadsafe(_settle, future, data, error)
            except RuntimeError:  # the loop is closed: nobody waits any more
                return


def _reading(stream: BinaryIO) -> Callable[[int], bytes]:
    """How the thread reads `stream`: its file descriptor itself where it has one, since
    a thread still waiting in a buffered stream's read holds that stream's lock, which the
    interpreter takes at exit (and aborts when it cannot)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream in memory
        read_some: Callable[[int], bytes] = getattr(stream, "read1", None) or stream.read
        return read_some
    return lambda size: os.read(fd, size)


def _settle(future: asyncio.Future[bytes], data: bytes, error: Exception | None) -> None:
    if future.done():  # cancelled while the thread read
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(data)


class ClientOutput(StdoutWriter):
    """pygls's writer over `stream`; `failed` holds the first error a write met, and
    `on_failure` is called then. What is written after it, or after the close (`exit`),
    goes nowhere."""

    def __init__(self, stream: BinaryIO) -> None:
        super().__init__(stream)
        self.stream = stream
        self.failed: OSError | None = None
        self.on_failure: Callable[[], object] = lambda: None
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.failed is not None or self.closed:
            return
        try:
            super().write(data)
        except OSError as exc:
            self.failed = exc
            self._discard()
            self.on_failure()

    def close(self) -> None:
        # `exit` closes it while work cut by the server's end (an offline compaction that
        # ends at its thread's next step) is still to answer: a write then raised
        # ValueError, and pygls logged it, and each report of it, with a traceback
        self.closed = True
        with contextlib.suppress(OSError):
            self.stream.close()

    def told(self) -> tuple[str, int] | None:
        """What the server says of the failure and its exit code, or None."""
        return None if self.failed is None else output_lost(self.failed)

    def _discard(self) -> None:
        """What the stream still holds goes to the null device, so that the interpreter's
        last flush at exit raises nothing."""
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):  # a stream in memory
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
