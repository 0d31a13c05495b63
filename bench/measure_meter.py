"""The meter's error (issue 19): Claude Code files cut just before each API request,
imported, and the usage Baton shows compared with what that request really held.

On the generated files (`baton_testkit/claude_code_gen.py`, with compactions: their usages hold a
client's 14K besides the messages) and, with `--corpus`, on the real transcripts, where a
compaction by Baton just before a sampled request stands in for the compactions the
corpus does not hold (`baton_testkit/meter_error.py` says how each figure is made)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.core.usage.estimator import Encoder, Estimator
from baton_testkit.claude_code_gen import generate
from baton_testkit.meter_error import Figures, Measured, figures, measure, measure_compacted

GENERATED_FILES, QUICK_FILES = 12, 4
CORPUS_SAMPLE = 5  # every 5th request of a real file is compacted before


def _as_json(found: Figures) -> dict[str, Any]:
    return {
        "requests": found.requests,
        "median": found.median,
        "p90": found.p90,
        "after_compaction": len(found.after_compaction),
        "after_compaction_worst": max(found.after_compaction, default=0.0),
    }


async def meter_error(work: Path, encoder: Encoder, quick: bool, corpus: Path | None) -> dict:
    estimator = Estimator(encoder=encoder)
    folder = work / "meter"
    folder.mkdir(parents=True, exist_ok=True)
    generated: list[Measured] = []
    for seed in range(QUICK_FILES if quick else GENERATED_FILES):
        era = ("newest", "recent")[seed % 2]
        made = generate(seed, era=era, compactions=2, media=False)
        generated += measure(made.write(folder / f"generated-{seed}.jsonl"), folder, estimator)
    out = {"generated": _as_json(figures(generated))}
    if corpus is not None:
        real: list[Measured] = []
        compacted: list[Measured] = []
        for path in sorted(corpus.iterdir()):
            if path.is_file() and path.suffix in (".jsonl", ".json"):
                real += measure(path, folder, estimator)
                compacted += await measure_compacted(path, folder, estimator, CORPUS_SAMPLE)
        out["corpus"] = _as_json(figures(real))
        out["corpus_compacted"] = _as_json(figures(compacted))
    return out
