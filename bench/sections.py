"""The run's sections, each a group of rows measured together (`run.py --only` picks some):
live servers (P1, P2), fresh servers (P3, P5, cold start), compaction (P4), counting,
one session's heavy work beside another's requests (P6)."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import measure_heavy
import measure_lib
import measure_lsp
import sessions
from servers import bare

from baton.core.conversation.messages import Message
from baton.core.usage.estimator import Encoder

Series = dict[str, dict[str, list[float]]]


@dataclass
class Run:
    """What every section works from: the generated sessions and where they are."""

    reps: int
    encoder: Encoder
    count: sessions.Counter
    built: dict[str, sessions.Built]
    dirs: dict[str, Path]
    work: Path
    say: Callable[[str], None]

    @property
    def small(self) -> str:
        return next(iter(self.built))

    @property
    def big(self) -> str:
        return list(self.built)[-1]

    @property
    def path(self) -> Path:
        path = self.built[self.big].path
        assert path is not None
        return path

    def sid(self, size: str) -> str:
        return self.built[size].session_id

    def make(self, seed: int, role: str) -> dict[str, Any]:
        """A fresh ~1K-token message to append."""
        return sessions.one_message(seed, role, 1_000, self.count)


async def live(run: Run, extra: dict[str, Any]) -> Series:
    """Every size held by its own server at once, so the sides of a ratio take turns."""
    series: Series = {}
    servers: measure_lsp.Live = {}
    baseline = await bare(run.work)
    try:
        for size in run.built:
            copy = run.work / f"live-{size}"
            shutil.copytree(run.dirs[size], copy)
            server, _ = await measure_lsp.loaded_server(copy, run.sid(size))
            servers[size] = (server, run.sid(size))
        run.say("usage round trips (P2)")
        series["usage"] = await measure_lsp.usage_rounds(servers, baseline, run.reps * 3)
        run.say(f"appends at {run.small} and {run.big} (P1)")
        pair = {size: servers[size] for size in (run.small, run.big)}
        appended = await measure_lsp.appends(pair, run.reps * 2, run.make, 1_000)
        series.update({f"append_{size}": group for size, group in appended.items()})
        run.say(f"baton/compact over LSP at {run.big}")
        series["lsp_compact"] = await measure_lsp.compactions(*servers[run.big], run.reps)
    finally:
        for server, _ in servers.values():
            await server.close()
        await baseline.close()
    return series


async def fresh(run: Run, extra: dict[str, Any]) -> Series:
    """A fresh server per rep opening the largest session, the in-process baselines
    measured in the same rep."""
    path, sid = run.path, run.sid(run.big)

    def loads() -> dict[str, float]:
        return {
            "json_loads_s": measure_lib.json_lines(path),
            "library_load_s": measure_lib.library_load(run.dirs[run.big], sid, run.encoder),
        }

    every = run.work / "data-all"  # all sizes in one data dir, for the server that holds them
    (every / "sessions").mkdir(parents=True)
    for built in run.built.values():
        assert built.path is not None
        shutil.copy2(built.path, every / "sessions" / built.path.name)
    others = [run.sid(size) for size in run.built if size != run.big]
    run.say(f"fresh servers opening {run.big} (P3, P5, cold start)")
    opened = await measure_lsp.opens(every, sid, run.work, run.reps, run.make, loads, others)
    return {"open": opened}


async def compaction(run: Run, extra: dict[str, Any]) -> Series:
    run.say("compaction (P4)")
    small = run.built[run.big].tokens < 100_000
    compacted = await measure_lib.compactions(
        run.dirs[run.big], run.sid(run.big), run.work, run.encoder, run.reps, small=small
    )
    extra["compact_tokens"] = {"pre": compacted["pre_tokens"], "post": compacted["post_tokens"]}
    return {"compact": {name: compacted[name] for name in ("compact_s", "load_s")}}


async def counting(run: Run, extra: dict[str, Any]) -> Series:
    run.say("counting")
    size = run.built[run.big].tokens
    raw = measure_lib.tiktoken_encoding()
    raw_count = measure_lib.raw_counter(raw)

    def session_for(rep: int) -> list[Message]:
        return sessions.build(size, 10_000 + rep, raw_count).messages  # seeds used nowhere else

    counted = measure_lib.counting(session_for, raw, run.encoder, run.reps)
    extra["counting_tokens"] = counted["baton_tokens"]
    extra["counting_check"] = {k: v for k, v in counted.items() if not k.endswith("_s")}
    return {"counting": {"baton_s": counted["baton_s"], "raw_s": counted["raw_s"]}}


async def heavy(run: Run, extra: dict[str, Any]) -> Series:
    """P6: a small message in a quick run (the section's point is the order, not the size)."""
    megabytes = measure_heavy.HUGE_MB if run.built[run.big].tokens >= 100_000 else 2
    run.say(f"another session's usage while one holding a {megabytes} MB message compacts (P6)")
    extra["heavy_mb"] = megabytes
    reps = min(run.reps, 3)  # each rep appends and compacts the huge message
    series = await measure_heavy.beside_a_compaction(run.work, reps, 20_000, megabytes)
    return {"heavy": series}


SECTIONS: dict[str, Callable[[Run, dict[str, Any]], Awaitable[Series]]] = {
    "live": live,
    "open": fresh,
    "compact": compaction,
    "count": counting,
    "heavy": heavy,
}
