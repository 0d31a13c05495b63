"""Measurements over stdio LSP: append (P1), usage round trips (P2), opening (P3), memory
(P5) and cold start, each beside its baseline in the same run."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from servers import Server, bare, baton

from baton import protocol

PUBLISH = "textDocument/publishDiagnostics"
MessageMaker = Callable[[int, str], dict[str, Any]]


async def append_one(server: Server, session_id: str, message: dict[str, Any]) -> dict[str, float]:
    """One append: request to response, to its diagnostics published, and the server's CPU."""
    uri = protocol.session_uri(session_id)
    mark = server.client.mark()
    cpu = server.cpu()
    start = time.perf_counter()
    await server.request(protocol.SESSION_APPEND, {"sessionId": session_id, "messages": [message]})
    answered = time.perf_counter()
    await server.client.wait_for(PUBLISH, lambda p: p.get("uri") == uri, after=mark)
    published = time.perf_counter()
    return {
        "response_s": answered - start,
        "diagnostics_s": published - start,
        "cpu_s": server.cpu() - cpu,
    }


Live = dict[str, tuple[Server, str]]  # size -> (a server holding it, the session id)


async def appends(live: Live, reps: int, make: MessageMaker, seed: int) -> dict[str, Any]:
    """`reps` appends of a ~1K-token message (prompt and reply in turn) to each server,
    alternating between them, after a first one kept apart: the first change after a load
    may build what later ones reuse."""
    out: dict[str, dict[str, list[float]]] = {size: {} for size in live}
    for n in range(reps + 1):
        message = make(seed + n, ("user", "assistant")[n % 2])
        turns = list(live.items())
        for size, (server, session_id) in turns if n % 2 else reversed(turns):
            figures = await append_one(server, session_id, message)
            for name, value in figures.items():
                out[size].setdefault(f"first_{name}" if n == 0 else name, []).append(value)
    return out


async def compactions(server: Server, session_id: str, reps: int) -> dict[str, list[float]]:
    """`baton/compact` (all, the server's extractive summarizer without a key) and the
    `baton/uncompact` that puts the view back, request to response, each rep."""
    params = {"sessionId": session_id}
    out: dict[str, list[float]] = {"compact_s": [], "uncompact_s": []}
    for _ in range(reps):
        await server.quiet()
        out["compact_s"].append((await server.timed(protocol.COMPACT, params))[0])
        await server.quiet()
        out["uncompact_s"].append((await server.timed(protocol.UNCOMPACT, params))[0])
    return out


async def usage_rounds(live: Live, baseline: Server, rounds: int) -> dict[str, list[float]]:
    """`baton/usage` on every live server and the bare server's one request, in turn,
    `rounds` times: `bare_s` and one `<size>_s` series per size."""
    out: dict[str, list[float]] = {"bare_s": [], **{f"{size}_s": [] for size in live}}
    await baseline.request("bench/ping", {})
    for server, session_id in live.values():
        await server.request(protocol.USAGE, {"sessionId": session_id})
    for _ in range(rounds):
        out["bare_s"].append((await baseline.timed("bench/ping", {}))[0])
        for size, (server, session_id) in live.items():
            elapsed, _ = await server.timed(protocol.USAGE, {"sessionId": session_id})
            out[f"{size}_s"].append(elapsed)
    return out


async def loaded_server(data_dir: Path, session_id: str) -> tuple[Server, dict[str, Any]]:
    """A Baton server with `session_id` open (its first usage answered) and settled."""
    server = await baton(data_dir)
    await server.quiet()
    usage = await server.request(protocol.USAGE, {"sessionId": session_id})
    await server.quiet()
    return server, usage


async def opens(
    source: Path,
    session_id: str,
    work: Path,
    reps: int,
    make: MessageMaker,
    beside: Callable[[], dict[str, float]],
    others: list[str],
) -> dict[str, list[float]]:
    """Fresh servers, one per rep, beside a fresh bare pygls server each time:
    spawn to `initialize` answered (cold start), the first `baton/usage` of a session
    no one opened yet (P3), and after one append the peak RSS (P5), then after a
    `baton/compact` of it (P5c: its transient copies count against the same goal). A
    second fresh server each rep opens the `others` first and then the session (P3 with
    sessions held).
    `beside` runs each rep too (the baselines measured in this process), so both sides
    share the moment."""
    out: dict[str, list[float]] = {
        name: []
        for name in (
            "bare_init_s",
            "baton_init_s",
            "first_usage_s",
            "held_first_usage_s",
            "bare_rss_mb",
            "idle_rss_mb",
            "open_rss_mb",
            "peak_rss_mb",
            "compact_peak_rss_mb",
        )
    }
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    for n in range(reps):
        for name, value in beside().items():
            out.setdefault(name, []).append(value)
        baseline = await bare(empty)
        out["bare_init_s"].append(baseline.init_s)
        await baseline.quiet()
        out["bare_rss_mb"].append(baseline.memory()["VmRSS"])
        await baseline.close()

        data_dir = work / f"open-{n}"
        shutil.copytree(source, data_dir)
        server = await baton(data_dir)
        out["baton_init_s"].append(server.init_s)
        await server.quiet()  # start-up work done: what follows is the opening alone
        out["idle_rss_mb"].append(server.memory()["VmRSS"])
        elapsed, _ = await server.timed(protocol.USAGE, {"sessionId": session_id})
        out["first_usage_s"].append(elapsed)
        out["open_rss_mb"].append(server.memory()["VmRSS"])
        await append_one(server, session_id, make(7_000 + n, "user"))
        await server.quiet()
        out["peak_rss_mb"].append(server.memory()["VmHWM"])
        await server.request(protocol.COMPACT, {"sessionId": session_id})
        await server.quiet()  # the peak of the session open, appended to, then compacted
        out["compact_peak_rss_mb"].append(server.memory()["VmHWM"])
        await server.close()
        shutil.rmtree(data_dir, ignore_errors=True)
        if others:
            out["held_first_usage_s"].append(await held_open(source, session_id, others, work))
    return out


async def held_open(source: Path, session_id: str, others: list[str], work: Path) -> float:
    """The first `baton/usage` of a session on a server that already holds `others`."""
    data_dir = work / "open-held"
    shutil.copytree(source, data_dir)
    server = await baton(data_dir)
    try:
        await server.quiet()
        for other in others:
            await server.request(protocol.USAGE, {"sessionId": other})
        await server.quiet()
        elapsed, _ = await server.timed(protocol.USAGE, {"sessionId": session_id})
    finally:
        await server.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    return elapsed
