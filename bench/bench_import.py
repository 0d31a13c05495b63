"""The import row: a generated Claude Code file (every record in it with a session id of its
own, as the crafted file that made imports quadratic) imported by a fresh process per
repetition: its seconds per 100 MB of file (wall, and the process's CPU over all its
threads) against `json.loads` of the same lines, each let go once parsed as a streaming
import lets it go (kept in a list, the collector's passes over them all would more than
double it), plus the counting of the resulting session's view (one after the other, a
fresh cache: what no import can do without; the turns a compaction in the file summarized
need no count until they are shown) in the same process, beside the counting of every
message it made, and its peak RSS growth beside the resulting session's bytes. With real
transcripts (`run.py --corpus`), the same for a file of them laid end to end
(`write_real_file`): records of real sizes, where the generated file's are about 1 KB
each, a third of real ones'.

    python bench/bench_import.py --child FILE DATA_DIR   (what each repetition runs)
    python bench/bench_import.py --real FOLDER FILE MB   (writes the file of real transcripts)
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MB = 1e6


def write_file(path: Path, megabytes: float, seed: int) -> Path:
    """Generated Claude Code sessions one after another up to `megabytes` of JSONL, every
    record with a session id of its own."""
    from baton_testkit.claude_code_gen import generate

    target, written, n = megabytes * MB, 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            era = ("old", "recent", "newest")[n % 3]
            for k, record in enumerate(generate(seed + n, era=era, turns=30).records):
                record["sessionId"] = f"{n:06d}-{k:06d}"
                line = json.dumps(record, separators=(",", ":")) + "\n"
                out.write(line)
                written += len(line.encode("utf-8"))
            n += 1
    return path


# what gives a copy of a transcript ids of its own: uuids (their last 12 hex digits moved
# on by the copy's number) and the API's message, call and request ids (a suffix)
UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)([0-9a-f]{12})")
API_ID = re.compile(rb"((?:toolu|msg|req)_[0-9A-Za-z]+)")


def write_real_file(path: Path, folder: Path, megabytes: float) -> Path:
    """The Claude Code transcripts (.jsonl) of `folder`, sorted by name, laid end to end again
    and again up to `megabytes`, each copy with ids of its own: one file of many real
    sessions (as Claude Code's own files of a resumed session hold several), of real
    records' sizes and shapes; nothing of it is kept after the run."""
    sources = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    if not sources:
        raise SystemExit(f"no Claude Code transcripts (.jsonl) in {folder}")
    texts = [source.read_bytes() for source in sources]
    target, written, copy = megabytes * MB, 0, 0
    with path.open("wb") as out:
        while written < target:
            for text in texts:
                if written >= target:
                    break
                text = _own_ids(text, copy)
                out.write(text)
                written += len(text)
            copy += 1
    return path


def _own_ids(text: bytes, copy: int) -> bytes:
    """The transcript's text with its ids made those of copy number `copy`."""
    text = UUID.sub(lambda m: m[1] + b"%012x" % ((int(m[2], 16) + copy) % 16**12), text)
    text = API_ID.sub(lambda m: m[1] + b"c%d" % copy, text)
    return text if text.endswith(b"\n") else text + b"\n"


def measure(file: Path, work: Path, reps: int) -> dict[str, list[float]]:
    """Each repetition in a fresh process (its peak RSS is the import's alone)."""
    series: dict[str, list[float]] = {}
    for rep in range(reps):
        data = work / f"import-{file.stem}-{rep}"
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(file), str(data)],
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        for name, value in figures.items():
            series.setdefault(name, []).append(float(value))
    return series


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1e3
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def _cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _child(file: Path, data: Path) -> dict[str, Any]:
    from baton.core.conversation.store import SessionStore
    from baton.core.importers.claude_code import import_with_report
    from baton.core.usage.estimator import Estimator, default_estimator, load_cl100k

    estimator = default_estimator()
    estimator.wait_ready()
    base = _rss_mb()
    store = SessionStore(data, estimator.count_message)
    start, cpu = time.perf_counter(), _cpu_s()
    session, report = import_with_report(file, store)
    import_s, import_cpu_s = time.perf_counter() - start, _cpu_s() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # before the baseline's
    fresh = Estimator(encoder=load_cl100k())
    view = session.view_messages()
    cpu = _cpu_s()
    counted = [fresh.count_message(m) for m in view]
    count_cpu_s = _cpu_s() - cpu
    assert counted == [m.tokens for m in view]  # the import's own counts
    fresh = Estimator(encoder=load_cl100k())
    messages = list(session.messages.values())
    cpu = _cpu_s()
    every = [fresh.count_message(m) for m in messages]
    count_all_cpu_s = _cpu_s() - cpu
    assert all(m.tokens in (0, n) for m, n in zip(messages, every, strict=True))
    start, lines = time.perf_counter(), 0
    for line in file.read_bytes().splitlines():  # each parsed and let go, as an import reads
        if line.strip():
            json.loads(line)
            lines += 1
    json_s = time.perf_counter() - start
    assert lines >= report.records
    return {
        "import_s": import_s,
        "import_cpu_s": import_cpu_s,
        "json_s": json_s,
        "count_cpu_s": count_cpu_s,
        "count_all_cpu_s": count_all_cpu_s,
        "peak_growth_mb": max(peak - base, 0.0),
        "session_mb": session.transcript.path.stat().st_size / MB,
        "file_mb": file.stat().st_size / MB,
        "messages": len(session.messages),
        "records": report.records,
    }


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(_child(Path(sys.argv[2]), Path(sys.argv[3]))))
    elif len(sys.argv) == 5 and sys.argv[1] == "--real":
        write_real_file(Path(sys.argv[3]), Path(sys.argv[2]), float(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
