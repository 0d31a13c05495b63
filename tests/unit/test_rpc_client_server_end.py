"""`baton demo`'s client when the server dies: what waits on it fails at once, naming how
the server ended, where it waited out its 30 seconds for an answer that could not come."""

from __future__ import annotations

import asyncio
import io
import sys

import pytest

from baton.cli.rpc_client import ServerEnded, StdioClient

# reads the first bytes of a request, then exits as a crashed server would
DIES = "import sys; sys.stdin.buffer.read(1); sys.exit(3)"
# reads until its input ends, saying nothing
SILENT = "import sys; sys.stdin.buffer.read()"


async def test_a_request_the_server_dies_on_fails_naming_its_exit() -> None:
    client = StdioClient(command=[sys.executable, "-c", DIES])
    await client.start()
    try:
        with pytest.raises(ServerEnded, match="the server exited with code 3"):
            await client.request("initialize", {})
        with pytest.raises(ServerEnded, match="code 3"):  # and so does the next one
            await client.request("shutdown")
    finally:
        await client.close()


async def test_every_pending_request_and_wait_fails_when_the_server_is_killed() -> None:
    client = StdioClient(command=[sys.executable, "-c", SILENT])
    await client.start()
    try:
        waits = [
            asyncio.ensure_future(client.request("initialize", {})),
            asyncio.ensure_future(client.request("baton/session/list", {})),
            asyncio.ensure_future(client.wait_for("baton/usage")),
        ]
        while len(client._pending) < 2:  # both requests written
            await asyncio.sleep(0)
        assert client.pid is not None
        client._proc.kill()  # type: ignore[union-attr]
        done = await asyncio.gather(*waits, return_exceptions=True)
        assert all(isinstance(result, ServerEnded) for result in done), done
        assert all("killed by signal 9" in str(result) for result in done), done
    finally:
        await client.close()


# stops reading its input, says so (a notification), then exits
CLOSES_INPUT = (
    'import os, sys; os.close(0); body = b\'{"jsonrpc": "2.0", "method": "closed"}\'; '
    "os.write(1, b'Content-Length: %d\\r\\n\\r\\n' % len(body) + body); sys.exit(6)"
)


async def test_a_request_to_a_server_that_no_longer_reads_fails_naming_its_exit() -> None:
    """A server gone between two requests: writing the next one failed with a bare
    ConnectionResetError, which `baton demo` told as a traceback."""
    client = StdioClient(command=[sys.executable, "-c", CLOSES_INPUT])
    await client.start()
    try:
        await client.wait_for("closed")
        with pytest.raises(ServerEnded, match="the server exited with code 6"):
            await client.request("initialize", {})
        with pytest.raises(ServerEnded, match="code 6"):
            await client.notify("initialized", {})
    finally:
        await client.close()


def test_the_demo_stops_in_one_line_naming_the_server_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from baton.cli import demo
    from baton.core.errors import BatonError

    monkeypatch.setattr(
        demo, "StdioClient", lambda env: StdioClient(env=env, command=[sys.executable, "-c", DIES])
    )
    with pytest.raises(BatonError) as caught:
        demo.main(io.StringIO())
    assert str(caught.value) == "the demo stopped: the server exited with code 3 before it answered"
