"""The webview rows of the bench (W1-W5): their goals read from the measured series, and
the one row that says why they were skipped."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from baton_testkit.bench_modules import bench_module

# The bench's modules import each other by name (they are scripts): lend it its siblings
# while it loads, under those names, and take them back after.
_LENT = [
    name for name in ("sessions", "figures", "report_kept", "report") if name not in sys.modules
]
for _name in _LENT:
    sys.modules[_name] = bench_module(_name)
try:
    measure_webview = bench_module("measure_webview")
finally:
    for _name in _LENT:
        del sys.modules[_name]


def series(**medians: float) -> dict[str, Any]:
    return {name: {"median": value} for name, value in medians.items()}


def figures(paint: float, dom: float, fps: float, heap: float) -> dict[str, Any]:
    base = {"whole_view_ms": 100, "worst_frame_ms": 20, "articles_drawn": 20, "messages": 3700}
    return {
        "webview_1k": series(
            first_paint_ms=50, dom_max_scrolling=200, scroll_fps=60, heap_mb=4, **base
        ),
        "webview_1m": series(
            first_paint_ms=paint, dom_max_scrolling=dom, scroll_fps=fps, heap_mb=heap, **base
        ),
    }


def test_rows_meet_their_goals_against_the_small_session() -> None:
    rows = measure_webview.rows(figures(70, 900, 58, 20), "1k", "1m", ["1k", "1m"])
    assert [row.key for row in rows] == ["W1", "W2", "W3", "W4"]
    assert all(row.met for row in rows)
    assert rows[0].figures["ratio"] == 70 / 50
    assert "3,700 messages" in rows[0].goal


def test_rows_miss_past_each_goal() -> None:
    rows = measure_webview.rows(figures(80, 3_001, 49, 38.5), "1k", "1m", ["1k", "1m"])
    assert [row.met for row in rows] == [False, False, False, False]
    # 2x the 1K heap + 30 MB: 38 MB is the goal here
    assert "goal 38.0 MB" in rows[3].measured


def test_a_skipped_run_says_why_in_one_row() -> None:
    rows = measure_webview.rows({"webview_skipped": "no node"}, "1k", "1m", ["1k", "1m"])
    assert len(rows) == 1 and rows[0].measured == "skipped: no node"


def test_missing_names_what_is_absent(monkeypatch: Any) -> None:
    monkeypatch.setattr(measure_webview, "node", lambda: None)
    assert "no node" in (measure_webview.missing() or "")
    monkeypatch.setattr(measure_webview, "node", lambda: "/usr/bin/node")
    monkeypatch.setattr(measure_webview, "CHROMIUM", "/nonexistent/chromium")
    assert "no chromium at /nonexistent/chromium" in (measure_webview.missing() or "")


def huge(paint: float, fps: float) -> dict[str, Any]:
    return series(first_paint_ms=paint, scroll_fps=fps, feed_height_px=40_000)


def test_the_huge_message_row_compares_its_paint_with_the_small_session() -> None:
    met = figures(70, 900, 58, 20) | {"webview_huge": huge(75, 55)}
    rows = measure_webview.rows(met, "1k", "1m", ["1k", "1m"])
    assert [row.key for row in rows] == ["W1", "W2", "W3", "W4", "W5"]
    assert rows[4].met and rows[4].figures == {"ratio": 75 / 50, "fps": 55}
    slow = figures(70, 900, 58, 20) | {"webview_huge": huge(76, 60)}
    assert not measure_webview.rows(slow, "1k", "1m", ["1k", "1m"])[4].met
    jerky = figures(70, 900, 58, 20) | {"webview_huge": huge(60, 49)}
    assert not measure_webview.rows(jerky, "1k", "1m", ["1k", "1m"])[4].met


def test_the_huge_message_session_holds_one_message_of_the_size_asked(tmp_path: Path) -> None:
    path = measure_webview.huge_message_session(tmp_path / "huge.json", megabytes=1)
    data = json.loads(path.read_text(encoding="utf-8"))
    sizes = [len(m["content"][0]["text"]) for m in data["messages"]]
    assert len(sizes) == 4 and max(sizes) == sizes[1]
    assert 1_000_000 <= sizes[1] < 1_001_000
    assert data["messages"][1]["content"][0]["text"].startswith("```\n")
