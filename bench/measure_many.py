"""Many and huge sessions (issue 26): `baton/session/list` over 10,000 sessions, over 10,000
entries half of which are odd (FIFOs, folders, links, empty and torn files), and over ten
24 MB transcripts, by a fresh server (its first list builds the index) and again (the index
kept), with the server's memory and descriptors; beside the least a list can do, reading
each file's header line, measured in the same run. And the memory of a fresh server
opening a session of 100,000 short messages (item 13's goal, with many small objects)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from report import Row, med, ms
from servers import baton

from baton import protocol

MB = 1e6
WORDS = ["index", "header", "session", "list", "descriptor", "memory", "lock", "tail"]


def write_sessions(folder: Path, count: int, turns: int, text_bytes: int, seed: int) -> int:
    """`count` transcripts of `turns` prompt/reply pairs of about `text_bytes` each, written
    as Baton writes them; their total size."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for n in range(count):
        sid = f"s_{rng.getrandbits(64):016x}"
        lines = [
            {
                "type": "session",
                "format": 1,
                "sessionId": sid,
                "title": f"session {n}",
                "model": "claude-sonnet-4-5",
                "systemPrompt": None,
                "createdAt": "2026-01-01T00:00:00+00:00",
            }
        ]
        for k in range(2 * turns):
            words = " ".join(rng.choice(WORDS) for _ in range(max(1, text_bytes // 8)))
            message = {
                "id": f"m{n}_{k}",
                "role": ("user", "assistant")[k % 2],
                "content": [{"type": "text", "text": words[:text_bytes]}],
                "createdAt": f"2026-01-{1 + k % 28:02d}T00:00:{n % 60:02d}+00:00",
                "tokens": text_bytes // 4,
            }
            lines.append({"type": "message", "message": message})
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        (folder / f"{sid}.jsonl").write_bytes(data)
        total += len(data)
    return total


ODD_KINDS = ("fifo", "folder", "link", "empty", "torn")


def add_odd(folder: Path, count: int) -> None:
    """`count` entries of `folder` named as sessions that a list cannot read as healthy
    ones, as many of each kind: FIFOs, folders, links (to /dev/zero and to a session),
    empty files, and copies of a session whose last line is torn (each naming itself)."""
    session = next(folder.glob("s_*.jsonl"))
    torn = session.read_bytes() + b'{"type": "message", "message": {"id": "m_torn", "ro'
    for n in range(count):
        kind = ODD_KINDS[n % len(ODD_KINDS)]
        path = folder / f"s_{kind}{n:06d}.jsonl"
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
        elif kind == "link":
            path.symlink_to("/dev/zero" if n % 2 else session)
        elif kind == "empty":
            path.write_bytes(b"")
        else:
            path.write_bytes(torn.replace(session.stem.encode(), path.stem.encode(), 1))


def header_reads(folder: Path) -> float:
    """Seconds to list the folder and read each regular file's first line: the least a list
    does (it reads nothing else either)."""
    start = time.perf_counter()
    for entry in os.scandir(folder):
        if not entry.is_file(follow_symlinks=False):
            continue
        with open(entry.path, "rb") as handle:
            line = handle.readline()
        if line:  # (an empty file has none)
            json.loads(line)
    return time.perf_counter() - start


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def lists(data_dir: Path, reps: int) -> dict[str, list[float]]:
    """One fresh server per rep: its first list, a second one, its memory and descriptors
    before and after (settled), and the header reads of the same folder."""
    out: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        out.setdefault(name, []).append(value)

    for _ in range(reps):
        add("headers_s", header_reads(data_dir / "sessions"))
        server = await baton(data_dir)
        try:
            await server.quiet()  # start-up work (the tokenizer's table) done, twice over:
            await asyncio.sleep(1.0)  # a loaded machine can make a busy server look quiet
            await server.quiet()
            before, fds = server.memory()["VmRSS"], descriptors(server.pid)
            cpu = server.cpu()
            first, result = await server.timed(protocol.SESSION_LIST)
            add("first_cpu_s", server.cpu() - cpu)
            again, _ = await server.timed(protocol.SESSION_LIST)
            await server.quiet()
            add("first_s", first)
            add("again_s", again)
            add("sessions", float(len(result["sessions"])))
            add("rss_before_mb", before)
            add("rss_growth_mb", max(server.memory()["VmRSS"] - before, 0.01))
            add("fds_growth", float(descriptors(server.pid) - fds) + 1)  # +1: a ratio's floor
        finally:
            await server.close()
    return out


async def long_open(data_dir: Path, reps: int) -> dict[str, list[float]]:
    """One fresh server per rep opening the one session under `data_dir` as a client does:
    its usage (the load), then its whole view (`get` without a page); RSS before, after the
    load, and the peak (VmHWM) once the get is answered."""
    out: dict[str, list[float]] = {}
    session_id = next((data_dir / "sessions").glob("*.jsonl")).stem
    for _ in range(reps):
        server = await baton(data_dir)
        try:
            await server.quiet()
            out.setdefault("idle_mb", []).append(server.memory()["VmRSS"])
            await server.request(protocol.USAGE, {"sessionId": session_id})
            await server.quiet()
            out.setdefault("loaded_mb", []).append(server.memory()["VmRSS"])
            view = await server.request(protocol.SESSION_GET, {"sessionId": session_id})
            await server.quiet()
            out.setdefault("peak_mb", []).append(server.memory()["VmHWM"])
            out.setdefault("messages", []).append(float(len(view["messages"])))
        finally:
            await server.close()
    return out


def long_row(series: dict[str, Any], size: int) -> Row:
    peak, limit = med(series, "peak_mb"), 3 * size / MB + 80
    return Row(
        "long_rss",
        f"peak RSS of a fresh server opening a session of {med(series, 'messages'):,.0f} "
        f"messages ({size / MB:.0f} MB): its usage, then its whole view",
        f"{peak:.0f} MB [{series['peak_mb']['min']:.0f}-{series['peak_mb']['max']:.0f}] "
        f"(idle {med(series, 'idle_mb'):.0f} MB, loaded {med(series, 'loaded_mb'):.0f} MB)",
        f"<= 3x transcript bytes + 80 MB ({limit:.0f} MB here)",
        peak <= limit,
        {"peak_mb": peak, "limit_mb": limit},
    )


def list_row(key: str, what: str, series: dict[str, Any], limit_s: float) -> Row:
    first, again = med(series, "first_s"), med(series, "again_s")
    ratio = first / med(series, "headers_s")
    return Row(
        key,
        f"`baton/session/list` of {what}, a fresh server's first list",
        f"{ms(series, 'first_s')} (server CPU {ms(series, 'first_cpu_s')}; {ratio:.1f}x "
        f"reading each file's header line, {ms(series, 'headers_s')}); "
        f"again {ms(series, 'again_s')}",
        f"<= {limit_s:g} s",
        first <= limit_s,
        {"first_s": first, "again_s": again, "header_ratio": ratio},
    )


def memory_row(key: str, what: str, series: dict[str, Any]) -> Row:
    growth = med(series, "rss_growth_mb")
    fds = med(series, "fds_growth") - 1
    return Row(
        key,
        f"server RSS growth for a list of {what}, and descriptors kept",
        f"{growth:.1f} MB (from {med(series, 'rss_before_mb'):.0f} MB); "
        f"{fds:.0f} descriptor(s) more after the list",
        "<= 20 MB, no descriptor kept",
        growth <= 20 and fds <= 0,
        {"growth_mb": growth, "fds_plus_one": fds + 1},
    )


def rows(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> list[Row]:
    many, huge = f["list_many"], f["list_huge"]
    n = int(med(many, "sessions"))
    h, size = int(med(huge, "sessions")), f["list_huge_bytes"] / max(med(huge, "sessions"), 1)
    what_many, what_huge = f"{n:,} sessions", f"{h} transcripts of {size / MB:.0f} MB"
    out = [
        list_row("many", what_many, many, 1.0),
        memory_row("many_rss", what_many, many),
        list_row("huge", what_huge, huge, 1.0),
        memory_row("huge_rss", what_huge, huge),
        long_row(f["long_open"], f["long_open_bytes"]),
    ]
    if "list_odd" in f:  # half of them sessions, half entries no list reads as one
        odd = f["list_odd"]
        what_odd = (
            f"{int(med(odd, 'sessions')):,} entries, half of them odd ({', '.join(ODD_KINDS)})"
        )
        out[2:2] = [
            list_row("many_odd", what_odd, odd, 1.0),
            memory_row("many_odd_rss", what_odd, odd),
        ]
    return out
