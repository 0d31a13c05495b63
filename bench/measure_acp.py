"""An ACP prompt turn beside the same turn over LSP, in one run: `baton acp` answering
`session/prompt` against `baton serve` answering `baton/session/send`, both on the fake
Messages API with the same reply, turns taken in alternation; and how long after the
reply is stored (the transcript's last write) the client has the `usage_update`."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from acp import spawn_agent_process, text_block
from baton.cli.rpc_client import StdioClient
from baton_testkit.acp_client import FAKE_KEY
from baton_testkit.fake_anthropic import FakeAnthropic

REPLY = " ".join(f"reply{n}" for n in range(60))  # a short reply, streamed in pieces
PROMPT = "Tell me about the code. " * 20


class Meter:
    """The bench's client: when each reply chunk and `usage_update` arrived (no raw
    observer, which would copy every message)."""

    def __init__(self) -> None:
        self.raw: list[tuple[float, str]] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.raw.append((time.time(), update.session_update))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError  # no tool asks in this bench


def _env(data_dir: Path, base_url: str) -> dict[str, str]:
    env = {**os.environ, "BATON_DATA_DIR": str(data_dir), "ANTHROPIC_BASE_URL": base_url}
    env["ANTHROPIC_API_KEY"] = FAKE_KEY
    env.pop("BATON_TOKEN", None)
    return env


async def _lsp(data_dir: Path, base_url: str) -> tuple[StdioClient, str]:
    client = StdioClient(env=_env(data_dir, base_url))
    await client.start()
    options = {"autoCompact": {"enabled": False}}
    await client.request(
        "initialize",
        {"processId": os.getpid(), "capabilities": {}, "initializationOptions": options},
    )
    await client.notify("initialized", {})
    made = await client.request("baton/session/create", {"title": "bench"})
    return client, made["sessionId"]


async def turns(work: Path, reps: int) -> dict[str, list[float]]:
    """`reps` turns on each side, alternating; the usage delay from each ACP turn."""
    out: dict[str, list[float]] = {"acp_s": [], "lsp_s": [], "usage_delay_s": []}
    fake = FakeAnthropic(default_text=REPLY).start()
    lsp_dir, acp_dir = work / "acp-lsp", work / "acp-acp"
    recorder = Meter()
    client, lsp_sid = await _lsp(lsp_dir, fake.base_url)
    try:
        async with spawn_agent_process(
            recorder,
            sys.executable,
            "-m",
            "baton",
            "acp",
            "--settings",
            str(_settings(work)),
            env=_env(acp_dir, fake.base_url),
            use_unstable_protocol=True,
        ) as (conn, _process):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(work))).session_id
            transcript = acp_dir / "sessions" / f"{sid}.jsonl"
            for rep in range(reps + 1):  # the first turn of each side warms it up
                start = time.perf_counter()
                await client.request(
                    "baton/session/send", {"sessionId": lsp_sid, "content": PROMPT}
                )
                lsp = time.perf_counter() - start
                seen = len(recorder.raw)
                start = time.perf_counter()
                await conn.prompt(session_id=sid, prompt=[text_block(PROMPT)])
                acp = time.perf_counter() - start
                stored = transcript.stat().st_mtime_ns / 1e9  # the reply's append
                arrived = [at for at, kind in recorder.raw[seen:] if kind == "usage_update"]
                replied = [at for at, kind in recorder.raw[seen:] if kind == "agent_message_chunk"]
                assert replied and arrived, "the ACP turn streamed no reply or no meter"
                if rep == 0:
                    continue
                out["lsp_s"].append(lsp)
                out["acp_s"].append(acp)
                out["usage_delay_s"].append(max(arrived[-1] - stored, 1e-6))
        asked = len(fake.message_requests())
        assert asked == 2 * (reps + 1), f"{asked} requests reached the model"
    finally:
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
    delay_ms = med(a, "usage_delay_s") * 1e3
    worst_ms = a["usage_delay_s"]["max"] * 1e3
    return Row(
        "acp",
        "ACP prompt turn (`baton acp`, `session/prompt` to its answer) vs the same turn over "
        "LSP (`baton serve`, `baton/session/send`); the `usage_update` after the reply is stored",
        f"{ratio:.2f}x ({ms(a, 'acp_s')} vs {ms(a, 'lsp_s')}); usage update "
        f"{delay_ms:.1f} ms after the reply's write (worst {worst_ms:.1f} ms)",
        "<= 1.2x; usage update <= 50 ms",
        ratio <= 1.2 and delay_ms <= 50,
        {"ratio": ratio, "usage_delay_ms": delay_ms},
    )


__all__: list[Any] = [row, turns]
