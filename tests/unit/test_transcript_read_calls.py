"""A transcript is read a megabyte at a time, by a session's load and by the list's
summary (issue 26, item 8): each read lets go of the interpreter, and a worker thread
that takes it back more often than every switch interval (5 ms) starves the event loop
waiting for it, whose request to switch each read resets. Read 4 KB (the load) or 64 KB
(the summary) at a time, a lane's load of a 100,000-message session held a request on
the agent's loop 83-425 ms at a time. Counted here by the read calls the process makes
(Linux's /proc/self/io), never by time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baton.core.conversation.transcript_read import LinePass
from baton.core.conversation.transcript_summary import summarize

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/io").exists(), reason="counts read calls in /proc/self/io (Linux)"
)
MESSAGES = 10_000
TEXT = "word " * 80  # 400 bytes a message: 4.5 MB in all


def read_calls() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("syscr:"):
            return int(line.split()[1])
    raise AssertionError("no syscr in /proc/self/io")


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    header = {"type": "session", "format": 1, "sessionId": "s_reads", "title": "reads"}
    lines = [json.dumps(header)]
    for n in range(MESSAGES):
        message = {
            "id": f"m{n}",
            "role": ("user", "assistant")[n % 2],
            "content": [{"type": "text", "text": TEXT}],
            "createdAt": "2026-01-01T00:00:00+00:00",
        }
        lines.append(json.dumps({"type": "message", "message": message}))
    path = tmp_path / "s_reads.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def most_reads(path: Path) -> int:
    """A read a megabyte, and a few more (the open's, the end's)."""
    return path.stat().st_size // (1 << 20) + 6


def test_a_load_reads_a_transcript_a_megabyte_at_a_time(transcript: Path) -> None:
    before = read_calls()
    events = sum(1 for _ in LinePass(transcript))
    made = read_calls() - before

    assert events == MESSAGES + 1
    assert made <= most_reads(transcript), f"{made} reads of a {transcript.stat().st_size} B file"


def test_a_summary_reads_a_transcript_a_megabyte_at_a_time(transcript: Path) -> None:
    before = read_calls()
    entry = summarize(str(transcript), os.lstat(transcript), None, whole=True)
    made = read_calls() - before

    assert entry.end == transcript.stat().st_size and entry.title == "reads"
    assert made <= most_reads(transcript), f"{made} reads of a {transcript.stat().st_size} B file"
