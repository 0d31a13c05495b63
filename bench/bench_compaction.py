"""Import + compaction cost on the real transcripts, as a ratio to a plain baseline.

For each corpus file it measures, in one run:
- baseline: parse the file and tokenize every message's text with cl100k (the least any
  tool must do to know a conversation's size);
- import: `import_claude_code` into a fresh data dir (transcript written, fsync'd);
- compact: `all` compaction with the offline extractive summarizer, committed;
- undo: `uncompact` of that compaction.
Each figure is the median of --repeat runs. Ratios to the baseline are what to compare
between versions (absolute seconds depend on the machine).

    python bench/bench_compaction.py [--corpus DIR] [--repeat N] [--json]

(DIR defaults to $BATON_CORPUS; the real transcripts are never part of the repository.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from baton.core.compaction.engine import CompactContext, compact, uncompact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Encoder, Estimator, default_estimator, load_cl100k

# the real transcripts come from outside the repository, named by --corpus or BATON_CORPUS
CORPUS_ENV = "BATON_CORPUS"


def records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        data = json.loads(text)
        return [r for r in data if isinstance(r, dict)]
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def baseline(path: Path, encoder: Encoder) -> int:
    total = 0
    for record in records(path):
        message = record.get("message")
        if isinstance(message, dict):
            text = json.dumps(message.get("content"), ensure_ascii=False)
            total += len(encoder.encode(text, disallowed_special=()))
    return total


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def measure(path: Path, repeat: int) -> dict[str, Any]:
    encoder = load_cl100k()
    estimator = default_estimator()
    base_s, _ = timed(lambda: baseline(path, encoder), repeat)
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=2_000, min_text_messages=3))

    def run_import() -> tuple[SessionStore, Any]:
        # a fresh estimator each run: import pays for tokenizing, as the baseline does
        counter = Estimator(encoder=encoder).count_message
        store = SessionStore(Path(tempfile.mkdtemp(prefix="baton-bench-")), counter)
        return store, import_claude_code(path, store)

    import_s, (store, session) = timed(run_import, repeat)
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    compact_times: list[float] = []
    undo_times: list[float] = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = asyncio.run(compact(session, CompactRequest(direction="all"), ctx))
        compact_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        uncompact(session, result.boundary_id)
        undo_times.append(time.perf_counter() - start)
    store.close()
    compact_s = statistics.median(compact_times)
    undo_s = statistics.median(undo_times)
    assert result is not None
    return {
        "file": path.name[:48],
        "bytes": path.stat().st_size,
        "baseline_s": round(base_s, 4),
        "import_s": round(import_s, 4),
        "compact_s": round(compact_s, 4),
        "undo_s": round(undo_s, 4),
        "import_x": round(import_s / base_s, 2),
        "compact_x": round(compact_s / base_s, 2),
        "pre_tokens": result.pre_tokens,
        "post_tokens": result.post_tokens,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=os.environ.get(CORPUS_ENV))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.corpus is None or not args.corpus.is_dir():
        print(f"name a folder of transcripts with --corpus DIR or {CORPUS_ENV}", file=sys.stderr)
        return 2
    files = sorted(
        p for p in args.corpus.iterdir() if p.suffix in (".jsonl", ".json") and p.is_file()
    )
    if not files:
        print(f"no corpus files in {args.corpus}", file=sys.stderr)
        return 2
    rows = [measure(path, args.repeat) for path in files]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    head = f"{'file':48} {'base s':>7} {'import s':>9} {'compact s':>10} {'undo s':>7}"
    head += f" {'imp/base':>8} {'cmp/base':>8} {'pre':>8} {'post':>7}"
    print(head)
    for r in rows:
        print(
            f"{r['file']:48} {r['baseline_s']:7.3f} {r['import_s']:9.3f} {r['compact_s']:10.3f}"
            f" {r['undo_s']:7.4f} {r['import_x']:8.2f} {r['compact_x']:8.2f}"
            f" {r['pre_tokens']:8,} {r['post_tokens']:7,}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
