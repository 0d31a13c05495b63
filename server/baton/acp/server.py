"""`baton acp`: the agent on stdio (newline-delimited JSON-RPC), over a service on the same
data dir as `baton serve`. Logs go to stderr; stdout carries the protocol alone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
from collections.abc import Callable
from typing import Any, cast

from acp import Agent
from acp.agent.connection import AgentSideConnection
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES

from baton.acp.agent import BatonAgent
from baton.acp.stdio_pipes import stdio_streams
from baton.acp.transport import StdioTransport
from baton.contract.output_lost import output_lost
from baton.core.background import answer_promptly
from baton.core.conversation.files import kind_of
from baton.core.errors import InvalidParams
from baton.core.service.service import BatonService
from baton.core.settings_file import read_settings

log = logging.getLogger(__name__)


def stdio_problem() -> str | None:
    """Why the agent cannot speak over its standard input and output, or None: on POSIX
    it polls them, which takes a pipe, a socket or a terminal (not a file, nor /dev/null)."""
    if sys.platform == "win32":  # the SDK reads and writes them in threads there
        return None
    for name, stream in (("input", sys.stdin), ("output", sys.stdout)):
        if stream is None:
            return f"standard {name} is closed"
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
            return f"standard {name} is {'a regular file' if stat.S_ISREG(mode) else kind_of(mode)}"
    return None


# how long the requests read before the input's end (a list, a load; not a prompt, whose
# turn is cancelled) are waited for before the agent ends, answered or not
ANSWER_WAIT = 10.0


async def serve_acp(data_dir: str | None = None, settings: dict[str, Any] | None = None) -> int:
    """Serve the client until its input ends, SIGTERM, or its output is lost (said in one
    line, as `baton serve` says it); the exit code."""
    service = BatonService(own_requests=True)  # an import's usage tells none of its requests
    raw = dict(settings or {})
    if data_dir:
        raw["dataDir"] = data_dir
    if raw:
        service.configure(raw, lambda text: log.warning("%s", text))
    for problem in service.data_dir_problems():  # once, at start, as `baton serve` says it
        log.warning("%s", problem)
    reader, writer, pipe = await stdio_streams(DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    transport = StdioTransport(reader, writer)
    agent = BatonAgent(service, transport)
    conn = AgentSideConnection(
        cast(Agent, agent),  # the SDK's Protocol: BatonAgent implements what Baton offers
        transport,
        listening=False,
        use_unstable_protocol=True,  # session/resume and session/close
        observers=[agent.observe],
    )
    stopped, stop = stopping()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop)

    def output_gone() -> None:  # a client that no longer reads is answered no more
        transport.drop_output()
        stop()

    if pipe is not None:
        pipe.on_lost = output_gone
    try:
        await conn.listen()
    except asyncio.CancelledError:
        if not stopped.is_set():
            raise
    finally:
        input_ended = not stopped.is_set()
        stopped.set()  # ending: a stop now (SIGTERM, the output lost) has nothing to cut short
        turns = [live.turn for live in agent.live.values() if live.turn is not None]
        for turn in turns:
            turn.cancel()
        service.lanes.close()  # a turn's summary held in its lane's thread holds no end
        # each keeps what arrived of its reply before the store closes
        await asyncio.shield(asyncio.gather(*turns, return_exceptions=True))
        answering = [task for task in agent.answering if not task.done()]
        if input_ended and answering:  # a list, a load read before the input's end: answered
            await asyncio.shield(asyncio.wait(answering, timeout=ANSWER_WAIT))
        await asyncio.shield(conn.close())
        await service.close()
    if pipe is None or pipe.failed is None or reader.at_eof():  # the client ended both
        return 0
    told, code = output_lost(pipe.failed)
    log.error("%s", told)
    return code


def stopping() -> tuple[asyncio.Event, Callable[[], None]]:
    """What stops the running task as Ctrl-C does (SIGTERM, an editor or a service manager
    ending the agent; its output lost): its turns are cancelled and keep what arrived of a
    reply. The event is set once it was called (the loop's close drops a signal handler),
    or once the agent ends: a stop then cancels nothing, else it would cut short the close
    that keeps the turns' replies, and end the agent with a CancelledError."""
    stopped = asyncio.Event()
    task = asyncio.current_task()

    def stop() -> None:
        if stopped.is_set():  # stopped already, or ending
            return
        stopped.set()
        if task is not None:
            task.cancel()

    return stopped, stop


def run(
    data_dir: str | None = None, settings: str | None = None, log_level: str = "WARNING"
) -> int:
    logging.getLogger().setLevel(log_level)
    answer_promptly()
    # a bad file: one stderr line, before anything starts
    raw = read_settings(settings, lambda text: log.warning("%s", text))
    problem = stdio_problem()
    if problem:
        raise InvalidParams(f"acp speaks over pipes, as an editor starts it: {problem}")
    try:
        return asyncio.run(serve_acp(data_dir, raw))
    except KeyboardInterrupt:
        return 130
