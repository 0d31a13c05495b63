"""Servers under measurement: spawned over stdio, initialized, their CPU time and memory read.

Both Baton and the bare pygls baseline are started the same way (this interpreter, a pipe
pair, stderr discarded) and driven by `baton.cli.rpc_client.StdioClient`, the minimal client
`baton demo` uses, so the client's own cost is the same on both sides.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton.cli.rpc_client import StdioClient

BENCH = Path(__file__).resolve().parent
BATON = [sys.executable, "-m", "baton", "serve"]
BARE = [sys.executable, str(BENCH / "bare_server.py")]
# what the measured server runs with: no background compaction racing the measurement
# (a generated 1M session sits past the default threshold), no key, no network
OPTIONS = {"autoCompact": {"enabled": False}}
CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {"publishDiagnostics": {"versionSupport": True}},
    "window": {"workDoneProgress": False},
}
QUIET_STEP = 0.05  # CPU-time sampling interval while waiting for a server to settle
QUIET_CPU = 0.002  # less CPU than this over one step counts as quiet
QUIET_LIMIT = 15.0

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def server_env(data_dir: Path) -> dict[str, str]:
    env = {**os.environ, "BATON_DATA_DIR": str(data_dir)}
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "BATON_TOKEN"):
        env.pop(name, None)
    return env


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) a process has used so far, in seconds."""
    clock = ctypes.c_int()
    if _libc.clock_getcpuclockid(pid, ctypes.byref(clock)) == 0:
        try:
            return time.clock_gettime(clock.value)
        except OSError:
            pass
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int) -> dict[str, float]:
    """Resident set now and its peak (VmRSS, VmHWM), in MB (10^6 bytes)."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(value.split()[0]) * 1024 / 1e6
    return out


@dataclass
class Server:
    """One spawned server with its client; `init_s` is spawn to `initialize` answered."""

    client: StdioClient
    pid: int
    init_s: float

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.client.request(method, params)

    async def timed(self, method: str, params: Any = None) -> tuple[float, Any]:
        start = time.perf_counter()
        result = await self.client.request(method, params)
        return time.perf_counter() - start, result

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def memory(self) -> dict[str, float]:
        return memory_mb(self.pid)

    async def quiet(self) -> None:
        """Wait until the server stops using CPU (start-up work done), up to a limit."""
        deadline = time.monotonic() + QUIET_LIMIT
        last = self.cpu()
        while time.monotonic() < deadline:
            await asyncio.sleep(QUIET_STEP)
            now = self.cpu()
            if now - last < QUIET_CPU:
                return
            last = now

    async def close(self) -> None:
        await self.client.close()


async def spawn(
    command: list[str], data_dir: Path, options: dict[str, Any] | None = None
) -> Server:
    """Start a server and initialize it; the clock runs from spawn to the answer."""
    client = StdioClient(env=server_env(data_dir), command=command)
    start = time.perf_counter()
    await client.start()
    params = {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": CAPABILITIES,
        "initializationOptions": options,
    }
    await client.request("initialize", params)
    init_s = time.perf_counter() - start
    await client.notify("initialized", {})
    assert client.pid is not None
    return Server(client, client.pid, init_s)


async def baton(data_dir: Path) -> Server:
    return await spawn(BATON, data_dir, OPTIONS)


async def bare(data_dir: Path) -> Server:
    return await spawn(BARE, data_dir)
