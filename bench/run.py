"""Issue 12's table, measured: every row beside its baseline in one run, met or missed.

    python bench/run.py [--quick] [--reps N] [--seed S] [--json PATH | --json -] [--corpus [DIR]]

Generates seeded sessions of 1K, 10K, 100K and 1M tokens (Baton's count) as transcripts,
then drives real `baton serve` processes over stdio LSP next to a bare pygls server, and
times the library where a row asks for it. Prints the table (median [interquartile range]
over the repetitions) and writes every series as JSON (default bench/results/latest.json).
`--quick` uses 1K and 10K sessions and two repetitions: a smoke run, not figures to quote
(without the webview rows unless `--only webview` names them). The webview rows (W1-W5)
load the chat webview's bundle in headless Chromium (bench/webview.mjs), and say they are
skipped when Node, Chromium or node_modules are missing.
Needs no API key and no network. `--corpus DIR` (or `--corpus` alone, for $BATON_CORPUS)
builds the largest session from real Claude Code transcripts instead (bench/corpus.py), and
adds an import row for them laid end to end (bench/bench_import.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import corpus
import sections
import sessions
from report import build_rows, stats, table

from baton.core.usage.estimator import Estimator, load_cl100k

BENCH = Path(__file__).resolve().parent
DEFAULT_JSON = BENCH / "results" / "latest.json"
CORPUS_ENV = "BATON_CORPUS"  # real transcripts, outside the repository; never needed


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1K and 10K sessions, 2 reps")
    parser.add_argument("--reps", type=int, help="repetitions per figure (default 7)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="where to write; - for stdout")
    parser.add_argument(
        "--only",
        help="comma-separated sections: live (P1, P2), open (P3, P5, cold start), "
        "compact (P4), count, import, retention, meter, many (lists of many and huge "
        "sessions, a long one opened), heavy (P6, P6i: another session beside a "
        "compaction, an import), "
        "webview (W1-W5: the chat webview in headless Chromium); default all",
    )
    parser.add_argument(
        "--corpus",
        nargs="?",
        type=Path,
        const=os.environ.get(CORPUS_ENV),
        help=f"the largest session from real transcripts in DIR (default ${CORPUS_ENV})",
    )
    args = parser.parse_args(argv)
    if "--corpus" in (argv if argv is not None else sys.argv) and not args.corpus:
        parser.error(f"--corpus needs a folder, or {CORPUS_ENV} set")
    args.sizes = ["1k", "10k"] if args.quick else list(sessions.SIZES)
    args.reps = args.reps or (2 if args.quick else 7)
    # A quick run is the server rows' smoke test: the webview rows (a browser) only when named.
    every = [name for name in sections.SECTIONS if not (args.quick and name == "webview")]
    args.only = args.only.split(",") if args.only else every
    unknown = sorted(set(args.only) - set(sections.SECTIONS))
    if unknown:
        parser.error(
            f"unknown section(s) {', '.join(unknown)}: pick from {', '.join(sections.SECTIONS)}"
        )
    return args


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    encoder = load_cl100k()
    count = Estimator(encoder=encoder).count_message
    small, big = args.sizes[0], args.sizes[-1]
    built: dict[str, sessions.Built] = {}
    dirs: dict[str, Path] = {}
    for size in args.sizes:
        if args.corpus and size == big:
            built[size] = corpus.build(args.corpus, sessions.SIZES[size], count)
        else:
            built[size] = sessions.build(sessions.SIZES[size], args.seed, count)
        dirs[size] = work / f"data-{size}"
        sessions.write(built[size], dirs[size])
        made = built[size]
        say(f"generated {size}: {made.tokens:,} tokens, {len(made.messages):,} messages")
    corpus_dir = Path(args.corpus) if args.corpus else None
    run = sections.Run(args.reps, encoder, count, built, dirs, work, say, args.quick, corpus_dir)
    series: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name in args.only:
        series.update(await sections.SECTIONS[name](run, extra))
    figures: dict[str, Any] = {
        name: {key: stats(values) for key, values in group.items()}
        for name, group in series.items()
    }
    figures.update(extra)
    path = built[big].path
    assert path is not None
    figures["transcript_bytes"] = path.stat().st_size
    rows = build_rows(figures, small, big, args.sizes)
    return {
        "sessions": {
            size: {
                "tokens": b.tokens,
                "messages": len(b.messages),
                "bytes": b.path.stat().st_size if b.path else 0,
                "shapes": b.shapes,
            }
            for size, b in built.items()
        },
        "rows": [row.as_json() for row in rows],
        "figures": figures,
        "raw": series,
        "table": table(rows),
    }


def context(args: argparse.Namespace) -> dict[str, Any]:
    def git(*cmd: str) -> str:
        try:
            done = subprocess.run(["git", *cmd], cwd=BENCH, capture_output=True, text=True)
        except OSError:
            return ""
        return done.stdout.strip()

    return {
        "command": " ".join(["python", "bench/run.py", *sys.argv[1:]]),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "reps": args.reps,
        "seed": args.seed,
        "corpus": bool(args.corpus),
        "sections": args.only,
        "sizes": args.sizes,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    info = context(args)
    work = Path(tempfile.mkdtemp(prefix="baton-bench-"))
    start = time.perf_counter()
    try:
        result = asyncio.run(measure(args, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info["seconds"] = round(time.perf_counter() - start, 1)
    info["load_average_after"] = list(os.getloadavg())
    out = {"run": info, **result}
    print(
        f"{info['command']}  (commit {info['commit']}{' + changes' if info['dirty'] else ''}, "
        f"{info['reps']} reps, load {info['load_average'][0]:.2f}, {info['seconds']} s)"
    )
    print(result["table"])
    text = json.dumps(out, indent=2)
    if args.json == "-":
        print(text)
    else:
        target = Path(args.json)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n", encoding="utf-8")
        say(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
