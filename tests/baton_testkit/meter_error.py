"""The meter's error on Claude Code files cut just before each API request.

For every request of a file (one per assistant `message.id` with real usage, subagents'
left out) the file is cut just before the request's first record, imported, and the
usage Baton shows is compared with what the request really held (input + cache creation
+ cache read). A request with no real usage before it in the file (the first one, or the
first after an old-style summary that starts a file) is left out: nothing in the cut file
tells what its client sent besides the messages. Used by the tests and by the bench.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage

Record = dict[str, Any]


@dataclass(frozen=True)
class Cut:
    """Where to cut (the records before `index` stay) and what the request held."""

    index: int
    actual: int
    after_compaction: bool  # the first request after a compaction


@dataclass(frozen=True)
class Measured:
    cut: Cut
    shown: int  # Baton's usedTokens for the cut file

    @property
    def error(self) -> float:
        """Relative error, signed (negative: the meter reads low)."""
        return (self.shown - self.cut.actual) / self.cut.actual


def read_records(path: Path) -> list[Record]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return [r for r in json.loads(text) if isinstance(r, dict)]
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _compaction(record: Record) -> bool:
    if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
        return True
    return bool(record.get("isCompactSummary"))


def cuts(records: Sequence[Record]) -> Iterator[Cut]:
    """Each request that has a real usage before it, in order."""
    seen: set[str] = set()
    learned = compacted = False
    for index, record in enumerate(records):
        if _compaction(record) and not record.get("isSidechain"):
            compacted = True
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        message = record.get("message") or {}
        api_id = message.get("id")
        usage = message.get("usage") or {}
        if not isinstance(api_id, str) or api_id in seen or message.get("model") == "<synthetic>":
            continue
        seen.add(api_id)
        actual = sum(
            int(usage.get(key) or 0)
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        if actual <= 0:
            continue
        if learned:
            yield Cut(index, actual, compacted)
        learned, compacted = True, False


def measure(path: Path, work: Path, estimator: Estimator) -> list[Measured]:
    """Every cut of the file at `path`, imported into a data dir under `work`."""
    records = read_records(path)
    store = SessionStore(work / f"data-{path.stem[:40]}", estimator.count_message)
    settings = Settings()
    out = []
    try:
        for cut in cuts(records):
            part = work / f"{path.stem[:40]}-{cut.index}.jsonl"
            lines = (json.dumps(r, separators=(",", ":")) for r in records[: cut.index])
            part.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            session = import_claude_code(part, store)
            usage = compute_usage(session, settings, estimator)
            out.append(Measured(cut, usage.used_tokens))
            store.delete(session.session_id)
            part.unlink()
    finally:
        store.close()
    return out


@dataclass(frozen=True)
class Figures:
    requests: int
    median: float  # of the absolute relative error
    p90: float
    after_compaction: list[float]  # the absolute error of each first request after one

    def line(self) -> str:
        worst = max(self.after_compaction, default=0.0)
        return (
            f"median {100 * self.median:.2f}%, p90 {100 * self.p90:.2f}% over "
            f"{self.requests} requests; first after a compaction: "
            f"{len(self.after_compaction)} requests, worst {100 * worst:.1f}%"
        )


def figures(measured: Sequence[Measured]) -> Figures:
    errors = sorted(abs(m.error) for m in measured)
    if not errors:
        return Figures(0, 0.0, 0.0, [])
    p90 = errors[min(len(errors) - 1, round(0.9 * (len(errors) - 1)))]
    after = [abs(m.error) for m in measured if m.cut.after_compaction]
    return Figures(len(errors), statistics.median(errors), p90, after)


async def measure_compacted(
    path: Path, work: Path, estimator: Estimator, every: int = 5
) -> list[Measured]:
    """The first request after a compaction, on files that hold none: every `every`th cut
    is imported and compacted by Baton (`all`, extractive) just before its request. What
    that request would have held is what it really held less the messages the compaction
    took out plus the summary it put in (the client's own system prompt and tools do not
    change with a compaction): its real usage minus the estimate of the view before the
    compaction, plus the estimate of the view after. Each figure is flagged
    `after_compaction`."""
    from baton.core.compaction import engine
    from baton.core.compaction.engine import CompactContext
    from baton.core.compaction.result import CompactRequest
    from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
    from baton.core.errors import NothingToCompact, SummarizerFailed

    records = read_records(path)
    store = SessionStore(work / f"compacted-{path.stem[:40]}", estimator.count_message)
    settings = Settings()
    context = CompactContext(
        settings=settings,
        estimator=estimator,
        summarizer=ExtractiveSummarizer(estimator.count_text),
    )
    out = []
    try:
        for n, cut in enumerate(cuts(records)):
            if n % every:
                continue
            part = work / f"{path.stem[:40]}-{cut.index}-c.jsonl"
            lines = (json.dumps(r, separators=(",", ":")) for r in records[: cut.index])
            part.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            session = import_claude_code(part, store)
            part.unlink()
            before = estimator.calibrated(session.tokens_in_view(0, len(session.view)))
            try:
                await engine.compact(session, CompactRequest(direction="all"), context)
            except (NothingToCompact, SummarizerFailed):
                store.delete(session.session_id)
                continue
            after = estimator.calibrated(session.tokens_in_view(0, len(session.view)))
            held = cut.actual - before + after
            shown = compute_usage(session, settings, estimator).used_tokens
            out.append(Measured(Cut(cut.index, held, True), shown))
            store.delete(session.session_id)
    finally:
        store.close()
    return out
