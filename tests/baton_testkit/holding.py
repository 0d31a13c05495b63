"""A Baton process whose work is held where a test says, never to let it go: to see what
its end (`exit`, a closed input, a signal) does while that work runs in its thread."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Sequence

HELD = "held by the test"  # said on stderr once the work is held
WAIT = 20.0  # an upper bound for the work to be held, never a pause

# `python -m baton ARGS` whose `target` ("module.function" or "module.Class:method")
# prints HELD and holds the thread that calls it, never to let it go: nothing that
# thread is told reaches it (a coroutine function held so holds its loop's thread too)
SCRIPT = """
import importlib, runpy, sys, threading

def held(*args, **kwargs):
    print({held!r}, file=sys.stderr, flush=True)
    threading.Event().wait()

{setup}
module, _, name = {target!r}.rpartition(".")
owner, _, attribute = name.rpartition(":")
found = importlib.import_module(module)
setattr(getattr(found, owner) if owner else found, attribute, held)
sys.argv = ["baton", *sys.argv[1:]]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
"""


@contextlib.asynccontextmanager
async def holding(
    target: str, args: Sequence[str], env: dict[str, str], setup: str = ""
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`baton ARGS` over pipes whose `target` holds its thread (`setup`: Python run
    first); killed at the end if it is still running."""
    script = SCRIPT.format(held=HELD, target=target, setup=setup)
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-c", script, *args],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def until_held(
    process: asyncio.subprocess.Process, wait: float = WAIT
) -> asyncio.Future[bytes]:
    """Once the target holds its thread: what the process says on stderr from then on,
    read until it ends."""
    assert process.stderr is not None
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), wait)
        assert line, "the process ended before its work was held"
        if line.decode().strip() == HELD:
            return asyncio.ensure_future(process.stderr.read())


async def no_traceback(told: asyncio.Future[bytes]) -> str:
    """What was said on stderr (`until_held`'s), which holds no traceback."""
    stderr = (await told).decode()
    assert "Traceback" not in stderr, stderr[-2000:]
    return stderr
