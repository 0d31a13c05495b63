"""`python bench/run.py --quick` runs end to end and reports every row of issue 12's table
and issue 26's many-sessions rows."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = ["P1", "P2", "P3", "P4", "P5", "P5c", "P6", "P6i", "cold", "count", "import"]
ROWS += ["retention"]
ROWS += ["continuity", "meter", "acp", "many", "many_rss", "many_odd", "many_odd_rss", "huge"]
ROWS += ["huge_rss", "long_rss"]


def test_quick_run_reports_every_row_with_figures(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--quick",
            "--reps",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert [row["key"] for row in result["rows"]] == ROWS
    for row in result["rows"]:
        assert row["figures"], row
        assert all(math.isfinite(v) and v > 0 for v in row["figures"].values()), row
        assert isinstance(row["met"], bool)
        assert row["goal"] in done.stdout  # the printed table has the row
    assert result["run"]["commit"]
    assert result["sessions"]["10k"]["tokens"] >= 9_800
