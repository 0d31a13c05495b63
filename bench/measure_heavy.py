"""One session's heavy work beside another's requests (P6): while the server compacts a
session holding one huge message, or imports a big Claude Code file (P6i), how long a
`baton/usage` of another session takes, beside the same request on the idle server in
the same rep."""

from __future__ import annotations

import asyncio
import random
import shutil
import time
from pathlib import Path
from typing import Any

from servers import Server, baton

from baton import protocol

HUGE_MB = 20  # the one message of the busy session
WORDS = ["alpha", "beta", "gamma", "delta", "file.py", "error:", "def", "return", "x=1", "the"]
IDLE_ROUNDS = 20


def huge_text(seed: int, megabytes: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(megabytes * 1_000_000 // 6))


def turns(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append({"role": "user", "content": f"question {i}"})
        out.append({"role": "assistant", "content": f"answer {i}"})
    return out


async def usage_s(server: Server, session_id: str) -> float:
    return (await server.timed(protocol.USAGE, {"sessionId": session_id}))[0]


async def beside_a_compaction(
    work: Path, reps: int, seed: int, megabytes: int = HUGE_MB
) -> dict[str, list[float]]:
    """Per rep, a fresh server: the idle usage round trip of the light session (the
    baseline), then the huge message appended to the busy session, a `baton/compact` of it
    sent, and the light session's usage asked again and again until the compaction is
    answered: the worst and the median round trip meanwhile."""
    out: dict[str, list[float]] = {"idle_s": [], "worst_s": [], "median_s": [], "compact_s": []}
    for n in range(reps):
        data_dir = work / f"heavy-{n}"
        data_dir.mkdir(parents=True)
        server = await baton(data_dir)
        try:
            busy = (await server.request(protocol.SESSION_CREATE, {"title": "busy"}))["sessionId"]
            light = (await server.request(protocol.SESSION_CREATE, {"title": "light"}))["sessionId"]
            await server.request(
                protocol.SESSION_APPEND, {"sessionId": light, "messages": turns(10)}
            )
            await server.quiet()
            idle = sorted([await usage_s(server, light) for _ in range(IDLE_ROUNDS)])
            out["idle_s"].append(idle[len(idle) // 2])
            message = {"role": "user", "content": huge_text(seed + n, megabytes)}
            appended = await server.request(
                protocol.SESSION_APPEND,
                {"sessionId": busy, "messages": [message, *turns(6)[1:]]},
            )
            await server.quiet()
            pivot = appended["messageIds"][1]  # the huge message and its answer
            params = {"sessionId": busy, "direction": "up_to", "pivotMessageId": pivot}
            start = time.perf_counter()
            done = asyncio.ensure_future(server.request(protocol.COMPACT, params))
            rounds: list[float] = []
            while not done.done():
                rounds.append(await usage_s(server, light))
            out["compact_s"].append(time.perf_counter() - start)
            await done
            rounds.sort()
            out["worst_s"].append(rounds[-1] if rounds else 0.0)
            out["median_s"].append(rounds[len(rounds) // 2] if rounds else 0.0)
        finally:
            await server.close()
            shutil.rmtree(data_dir, ignore_errors=True)
    return out


async def beside_an_import(work: Path, reps: int, file: Path) -> dict[str, list[float]]:
    """Per rep, a fresh server: the idle usage round trip of a light session (the
    baseline), then a `baton/session/import` of `file` sent, and the light session's usage
    and get asked in turn until the import is answered: the worst, the 95th percentile and
    the median round trip meanwhile."""
    out: dict[str, list[float]] = {
        "idle_s": [],
        "worst_s": [],
        "p95_s": [],
        "median_s": [],
        "import_s": [],
    }
    for n in range(reps):
        data_dir = work / f"beside-import-{n}"
        data_dir.mkdir(parents=True)
        server = await baton(data_dir)
        try:
            light = (await server.request(protocol.SESSION_CREATE, {"title": "light"}))["sessionId"]
            await server.request(
                protocol.SESSION_APPEND, {"sessionId": light, "messages": turns(10)}
            )
            # its first get opens the session's document (told once): not the import's
            await server.request(protocol.SESSION_GET, {"sessionId": light})
            await server.quiet()
            idle = sorted([await usage_s(server, light) for _ in range(IDLE_ROUNDS)])
            out["idle_s"].append(idle[len(idle) // 2])
            start = time.perf_counter()
            done = asyncio.ensure_future(
                server.request(protocol.SESSION_IMPORT, {"path": str(file)})
            )
            rounds: list[float] = []
            while not done.done():
                rounds.append(await usage_s(server, light))
                asked = {"sessionId": light}
                rounds.append((await server.timed(protocol.SESSION_GET, asked))[0])
            out["import_s"].append(time.perf_counter() - start)
            await done
            rounds.sort()
            out["worst_s"].append(rounds[-1] if rounds else 0.0)
            out["p95_s"].append(rounds[int(len(rounds) * 0.95)] if rounds else 0.0)
            out["median_s"].append(rounds[len(rounds) // 2] if rounds else 0.0)
        finally:
            await server.close()
            shutil.rmtree(data_dir, ignore_errors=True)
    return out
