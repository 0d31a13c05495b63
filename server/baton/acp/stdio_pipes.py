"""The agent's stdin and stdout as asyncio streams, and the protocol of its output pipe:
its flow control and its loss (the client's reader gone, a write refused), which the
SDK's own protocol does not hear."""

from __future__ import annotations

import asyncio
import errno
import sys
from collections.abc import Callable

from acp.stdio import stdio_streams as sdk_stdio_streams


class OutputPipe(asyncio.BaseProtocol):
    """The loop's protocol of the pipe to the client: its flow control, which a drain
    waits on, and its loss (the client's reader gone, a write refused): `failed` holds
    why, and `on_lost` is called then. The SDK's own protocol hears neither, so that the
    agent went on answering a client that no longer read."""

    def __init__(self) -> None:
        self.failed: OSError | None = None
        self.on_lost: Callable[[], object] = lambda: None
        self._resumed: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        if self._resumed is None:
            self._resumed = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        resumed, self._resumed = self._resumed, None
        if resumed is not None and not resumed.done():
            resumed.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        # a pipe whose reader is gone is seen as it closes, before any write: no error
        gone = BrokenPipeError(errno.EPIPE, "Broken pipe")
        self.failed = exc if isinstance(exc, OSError) else gone
        self.resume_writing()  # a drain never waits for a pipe that is gone
        self.on_lost()

    async def _drain_helper(self) -> None:  # what StreamWriter.drain awaits
        if self._resumed is not None:
            await self._resumed


async def stdio_streams(
    limit: int,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, OutputPipe | None]:
    """The agent's stdin and stdout as streams, and the protocol of its output (None on
    Windows, where the SDK writes it from a thread)."""
    if sys.platform == "win32":
        return (*await sdk_stdio_streams(limit=limit), None)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pipe = OutputPipe()
    output, _ = await loop.connect_write_pipe(lambda: pipe, sys.stdout)
    return reader, asyncio.StreamWriter(output, pipe, None, loop), pipe
