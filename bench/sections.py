"""The run's sections, each a group of rows measured together (`run.py --only` picks some):
live servers (P1, P2), fresh servers (P3, P5, cold start), compaction (P4), counting,
the import of a large Claude Code file, retention after three rounds of compaction, the
meter's error, many and huge sessions listed and a long one opened, one
session's heavy work beside another's requests (P6), an ACP turn beside an LSP one."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_import
import measure_acp
import measure_heavy
import measure_lib
import measure_lsp
import measure_many
import measure_meter
import measure_retention
import measure_webview
import sessions
from servers import bare

from baton.core.conversation.messages import Message
from baton.core.usage.estimator import Encoder, Estimator

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
    quick: bool = False
    corpus: Path | None = None  # real transcripts (`--corpus`)

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


async def importing(run: Run, extra: dict[str, Any]) -> Series:
    """A generated Claude Code file of 100 MB (4 MB with --quick), and with `--corpus` one
    of the real transcripts laid end to end, each imported by a fresh process per
    repetition (at most three: each reads the whole file)."""
    megabytes = 4 if run.quick else 100
    run.say(f"import of a {megabytes} MB Claude Code file")
    files = {"import": bench_import.write_file(run.work / "claude-code.jsonl", megabytes, seed=7)}
    if run.corpus is not None:
        real = run.work / "claude-code-real.jsonl"
        files["import_real"] = bench_import.write_real_file(real, run.corpus, megabytes)
    series: Series = {}
    for name, path in files.items():
        measured = bench_import.measure(path, run.work, min(run.reps, 3))
        extra[f"{name}_file"] = {k: measured[k][0] for k in IMPORT_FILE}
        series[name] = {k: measured[k] for k in IMPORT_KEPT}
    return series


IMPORT_FILE = ("file_mb", "session_mb", "messages", "records")
IMPORT_KEPT = (
    "import_s",
    "import_cpu_s",
    "json_s",
    "count_cpu_s",
    "count_all_cpu_s",
    "peak_growth_mb",
)


# The retention row's session: three rounds of about 150K tokens each (what a 200K window
# holds between compactions near its threshold); a quick run uses a tenth of it.
RETENTION_TOKENS = 450_000
RETENTION_SEED = 20_000  # a seed used nowhere else
CONTINUITY_TOKENS = 1_000_000


async def retention(run: Run, extra: dict[str, Any]) -> Series:
    quick = run.built[run.big].tokens < 100_000  # a quick run
    size = RETENTION_TOKENS // 10 if quick else RETENTION_TOKENS
    run.say(f"retention after three rounds of compaction ({size:,} tokens)")
    built = sessions.build(size, RETENTION_SEED, run.count)
    estimator = Estimator(encoder=run.encoder)
    found = await measure_retention.rounds_of_compaction(built.messages, estimator, small=quick)
    extra["retention_rounds"] = {"tokens": built.tokens, **found}
    # The 1M session (100K in a quick run), marked with standing instructions, defining
    # edits and task lists: issue 24's goals after three rounds.
    size = CONTINUITY_TOKENS // 10 if quick else CONTINUITY_TOKENS
    run.say(f"continuity after three rounds of compaction ({size:,} tokens)")
    built = sessions.build(size, RETENTION_SEED, run.count)
    marked = measure_retention.marked(built.messages)
    found = await measure_retention.rounds_of_compaction(marked, estimator, small=quick)
    extra["retention_continuity"] = {"tokens": built.tokens, **found}
    return {}


async def meter(run: Run, extra: dict[str, Any]) -> Series:
    run.say("the meter's error on Claude Code files cut before each request")
    extra["meter_error"] = await measure_meter.meter_error(
        run.work, run.encoder, run.quick, run.corpus
    )
    return {}


async def many(run: Run, extra: dict[str, Any]) -> Series:
    """`baton/session/list` over many small sessions (and as many entries, half of them odd)
    and over a few huge ones; a fresh server's memory opening a session of many short
    messages."""
    count, mb = (1_000, 4) if run.quick else (10_000, 24)
    many_dir, huge_dir, odd_dir = run.work / "many", run.work / "huge", run.work / "odd"
    measure_many.write_sessions(many_dir / "sessions", count, 3, 300, 26)
    measure_many.write_sessions(odd_dir / "sessions", count // 2, 3, 300, 29)
    measure_many.add_odd(odd_dir / "sessions", count - count // 2)
    huge = 2 if run.quick else 10
    turns = mb * 1_000_000 // 17_500  # two ~10 KB messages a turn, ~17.5 KB on disk
    extra["list_huge_bytes"] = measure_many.write_sessions(
        huge_dir / "sessions", huge, turns, 10_000, 27
    )
    long_dir, long_turns = run.work / "long", 5_000 if run.quick else 50_000
    extra["long_open_bytes"] = measure_many.write_sessions(
        long_dir / "sessions", 1, long_turns, 100, 28
    )
    run.say(f"lists of {count:,} sessions and of {huge} of {mb} MB")
    lists = {
        "list_many": await measure_many.lists(many_dir, run.reps),
        "list_odd": await measure_many.lists(odd_dir, run.reps),
        "list_huge": await measure_many.lists(huge_dir, run.reps),
    }
    run.say(f"fresh servers opening a session of {2 * long_turns:,} messages")
    return {**lists, "long_open": await measure_many.long_open(long_dir, min(run.reps, 3))}


async def heavy(run: Run, extra: dict[str, Any]) -> Series:
    """P6 and P6i: a small message and file in a quick run (the section's point is the
    order, not the size)."""
    megabytes = measure_heavy.HUGE_MB if run.built[run.big].tokens >= 100_000 else 2
    run.say(f"another session's usage while one holding a {megabytes} MB message compacts (P6)")
    extra["heavy_mb"] = megabytes
    reps = min(run.reps, 3)  # each rep appends and compacts the huge message
    series = await measure_heavy.beside_a_compaction(run.work, reps, 20_000, megabytes)
    file_mb = 4 if run.quick else IMPORT_BESIDE_MB
    run.say(f"another session's usage and get while a {file_mb} MB file is imported (P6i)")
    extra["beside_import_mb"] = file_mb
    file = bench_import.write_file(run.work / "beside-import.jsonl", file_mb, seed=11)
    beside = await measure_heavy.beside_an_import(run.work, reps, file)
    return {"heavy": series, "heavy_import": beside}


IMPORT_BESIDE_MB = 50  # the generated Claude Code file P6i imports


async def acp_turn(run: Run, extra: dict[str, Any]) -> Series:
    """An ACP prompt turn beside the same turn over LSP, and the meter's delay after it."""
    reps = max(10, run.reps * 6)  # a turn is short and the load shared: many pairs
    run.say(f"{reps} pairs of prompt turns over ACP and over LSP, in alternating order")
    return {"acp_turn": await measure_acp.turns(run.work, reps)}


async def webview(run: Run, extra: dict[str, Any]) -> Series:
    """W1-W5: the chat webview fed the smallest and the largest session, and one holding a
    20 MB message."""
    why = measure_webview.missing()
    if why:
        run.say(f"webview rows skipped: {why}")
        extra["webview_skipped"] = why
        return {}
    pair = {size: run.built[size] for size in (run.small, run.big)}
    run.say(f"the chat webview in headless Chromium at {run.small} and {run.big} (W1-W5)")
    return measure_webview.measure(pair, run.work, run.reps)


SECTIONS: dict[str, Callable[[Run, dict[str, Any]], Awaitable[Series]]] = {
    "live": live,
    "open": fresh,
    "compact": compaction,
    "count": counting,
    "import": importing,
    "retention": retention,
    "meter": meter,
    "many": many,
    "heavy": heavy,
    "acp": acp_turn,
    "webview": webview,
}
