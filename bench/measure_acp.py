"""An ACP prompt turn beside the same turn over LSP, in one run: `baton acp` answering
`session/prompt` against `baton serve` answering `baton/session/send`, both on the fake
Messages API with the same reply and both offering the workspace tools, turns taken in
pairs whose order alternates (ABBA); and how long after the reply is stored (the
transcript's last write) the client has the `usage_update`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from servers import cpu_seconds

from baton.cli.rpc_client import StdioClient
from baton_testkit.acp_client import FAKE_KEY
from baton_testkit.fake_anthropic import FakeAnthropic

REPLY = " ".join(f"reply{n}" for n in range(60))  # a short reply, streamed in pieces
PROMPT = "Tell me about the code. " * 20
WARM = 2  # the first turns of each side warm it up (imports, caches) and are not counted


class AcpClient:
    """The bench's ACP client: newline-delimited JSON-RPC over the agent's pipes, every
    `session/update` kept with its arrival time. As light as `StdioClient` on the LSP side
    (one `json.loads` per message), so the client's own cost is the same on both sides."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.command, self.env = command, env
        self.raw: list[tuple[float, str]] = []
        self.pid = 0
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            limit=1 << 24,
        )
        self.pid = self._proc.pid
        self._reader = asyncio.create_task(self._read())

    async def request(self, method: str, params: Any) -> Any:
        assert self._proc is not None and self._proc.stdin is not None
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        line = json.dumps({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        self._proc.stdin.write(line.encode() + b"\n")
        await self._proc.stdin.drain()
        return await future

    async def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while line := await self._proc.stdout.readline():
            message = json.loads(line)
            if message.get("method") == "session/update":
                self.raw.append((time.time(), message["params"]["update"]["sessionUpdate"]))
            elif "id" in message and "method" not in message:
                future = self._pending.pop(message["id"])
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]))
                else:
                    future.set_result(message.get("result"))
        for future in self._pending.values():  # the agent went away: nothing will answer
            future.set_exception(RuntimeError("baton acp exited"))

    async def close(self) -> None:
        if self._proc is not None and self._proc.returncode is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                await asyncio.wait_for(self._proc.wait(), 5)
            except TimeoutError:
                self._proc.kill()
                await self._proc.wait()
        if self._reader is not None:
            self._reader.cancel()


def _env(data_dir: Path, base_url: str) -> dict[str, str]:
    env = {**os.environ, "BATON_DATA_DIR": str(data_dir), "ANTHROPIC_BASE_URL": base_url}
    env["ANTHROPIC_API_KEY"] = FAKE_KEY
    env.pop("BATON_TOKEN", None)
    return env


async def _lsp(data_dir: Path, base_url: str, folder: Path) -> tuple[StdioClient, str]:
    """`baton serve` with `folder` open, as the ACP session's cwd: both offer the tools."""
    client = StdioClient(env=_env(data_dir, base_url))
    await client.start()
    options = {"autoCompact": {"enabled": False}}
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "capabilities": {},
            "initializationOptions": options,
            "workspaceFolders": [{"uri": folder.as_uri(), "name": "bench"}],
        },
    )
    await client.notify("initialized", {})
    made = await client.request("baton/session/create", {"title": "bench"})
    return client, made["sessionId"]


async def turns(work: Path, reps: int) -> dict[str, list[float]]:
    """`reps` turns on each side, alternating; the usage delay from each ACP turn."""
    out: dict[str, list[float]] = {
        "acp_s": [],
        "lsp_s": [],
        "acp_cpu_s": [],
        "lsp_cpu_s": [],
        "pair_ratio": [],
        "usage_delay_s": [],
    }
    fake = FakeAnthropic(default_text=REPLY).start()
    lsp_dir, acp_dir = work / "acp-lsp", work / "acp-acp"
    command = [sys.executable, "-m", "baton", "acp", "--settings", str(_settings(work))]
    agent = AcpClient(command, _env(acp_dir, fake.base_url))
    client, lsp_sid = await _lsp(lsp_dir, fake.base_url, work)
    try:
        await agent.start()
        await agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        made = await agent.request("session/new", {"cwd": str(work), "mcpServers": []})
        sid = made["sessionId"]
        transcript = acp_dir / "sessions" / f"{sid}.jsonl"
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": PROMPT}]}
        lsp_send = {"sessionId": lsp_sid, "content": PROMPT}
        sides = {
            "lsp": (client.pid, lambda: client.request("baton/session/send", lsp_send)),
            "acp": (agent.pid, lambda: agent.request("session/prompt", prompt)),
        }
        for rep in range(reps + WARM):
            # ABBA: each side goes first in every other pair, so neither always runs just
            # after the other's turn (the fake's thread, the client's GC, the load's drift)
            order = ("lsp", "acp") if rep % 2 == 0 else ("acp", "lsp")
            wall: dict[str, float] = {}
            cpu: dict[str, float] = {}
            seen = len(agent.raw)
            for side in order:
                pid, turn = sides[side]
                assert pid is not None
                before, start = cpu_seconds(pid), time.perf_counter()
                await turn()
                wall[side] = time.perf_counter() - start
                cpu[side] = cpu_seconds(pid) - before
                if side == "acp":
                    stored = transcript.stat().st_mtime_ns / 1e9  # the reply's append
            arrived = [at for at, kind in agent.raw[seen:] if kind == "usage_update"]
            replied = [at for at, kind in agent.raw[seen:] if kind == "agent_message_chunk"]
            assert replied and arrived, "the ACP turn streamed no reply or no meter"
            if rep < WARM:
                continue
            for side in order:
                out[f"{side}_s"].append(wall[side])
                out[f"{side}_cpu_s"].append(cpu[side])
            out["pair_ratio"].append(wall["acp"] / wall["lsp"])
            out["usage_delay_s"].append(max(arrived[-1] - stored, 1e-6))
        asked = len(fake.message_requests())
        assert asked == 2 * (reps + WARM), f"{asked} requests reached the model"
    finally:
        await agent.close()
        await client.close()
        fake.close()
    return out


def _settings(work: Path) -> Path:
    path = work / "acp-settings.json"
    path.write_text('{"autoCompact": {"enabled": false}}')
    return path


def row(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> Any:
    from report import Row, med, ms

    a = f["acp_turn"]
    ratio = med(a, "acp_s") / med(a, "lsp_s")
    cpu = med(a, "acp_cpu_s") / max(med(a, "lsp_cpu_s"), 1e-9)
    pair = a["pair_ratio"]
    delay_ms = med(a, "usage_delay_s") * 1e3
    worst_ms = a["usage_delay_s"]["max"] * 1e3
    return Row(
        "acp",
        "ACP prompt turn (`baton acp`, `session/prompt` to its answer) vs the same turn over "
        "LSP (`baton serve`, `baton/session/send`); the `usage_update` after the reply is stored",
        f"{ratio:.2f}x ({ms(a, 'acp_s')} vs {ms(a, 'lsp_s')}, {pair['n']} pairs; each pair's "
        f"ratio {pair['median']:.2f}x [{pair['q1']:.2f}-{pair['q3']:.2f}]); server CPU per turn "
        f"{cpu:.2f}x ({ms(a, 'acp_cpu_s')} vs {ms(a, 'lsp_cpu_s')}); usage update "
        f"{ms(a, 'usage_delay_s')} after the reply's write (worst {worst_ms:.1f} ms)",
        "<= 1.2x; usage update <= 50 ms",
        ratio <= 1.2 and delay_ms <= 50,
        {
            "ratio": ratio,
            "pair_ratio": float(pair["median"]),
            "cpu_ratio": cpu,
            "usage_delay_ms": delay_ms,
        },
    )


__all__: list[Any] = [row, turns]
