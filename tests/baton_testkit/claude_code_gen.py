"""Seeded generator of Claude Code session files, with the ground truth an import must find.

`generate(seed, ...)` writes nothing: it returns the records (the shapes of Claude Code
1.0.x to 2.1.x files) and a `Truth` counted while building them, independently of the
importer. `Generated.write(path)` writes JSONL, or the JSON-array variant.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton_testkit.claude_code_builder import Truth
from baton_testkit.claude_code_scenes import SessionFile

__all__ = ["CASES", "SHAPES", "Generated", "Truth", "case", "foreign_files", "generate"]

ERAS = {  # Claude Code version and model of each era (SessionFile knows what each writes)
    "old": ("1.0.70", "claude-sonnet-4-20250514"),
    "recent": ("2.0.37", "claude-sonnet-4-5-20250929"),
    "newest": ("2.1.114", "claude-opus-4-7"),
}
SHAPES = {
    "split-response",  # one record per content block, sharing message.id
    "parallel-grouped",  # several calls, then their results
    "parallel-interleaved",  # call, result, call, result, within one response
    "compact-boundary",
    "several-compactions",
    "summary-first",  # the old manual /compact: a new file that starts with the summary
    "two-session-ids",
    "title",
    "image",
    "pdf",
    "image-result",
    "image-mislabelled",  # a JPEG pasted as image/png
    "thinking",
    "redacted-thinking",
    "sidechain-warmup",
    "sidechain-task",
    "attachment",
    "system-record",
    "recent-records",  # permission-mode, last-prompt, queue-operation, file-history-snapshot
    "old-compaction",  # 1.0.6x: a summary record with no parent mid-file, no compact_boundary
    "restart",  # after one: a prompt with no parent starts the conversation again
    "away-summary",  # system/away_summary, 2.1's recap
    "contaminated-title",  # a summary record whose leaf is in another file
    "synthetic",
    "interrupted",
    "empty-content",
    "repair-unanswered",
    "repair-orphan",
    "repair-repeated-id",
    "repair-headless",
}


@dataclass
class Generated:
    """One generated file: its records, in order, and what importing them must give."""

    records: list[dict[str, Any]]
    truth: Truth
    array: bool = False  # the JSON-array variant (written by a Stop hook)

    def write(self, path: Path) -> Path:
        if self.array:
            text = json.dumps(self.records, indent=2)
        else:
            text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in self.records)
        path.write_text(text, encoding="utf-8")
        return path


def generate(
    seed: int = 0,
    *,
    era: str | None = None,
    turns: int | None = None,
    compactions: int | None = None,
    summary_first: bool | None = None,
    repairs: bool | None = None,
    headless: bool = False,
    array: bool = False,
    media: bool = True,
    old_compactions: int = 0,
    restarts: int = 0,
    away: bool = False,
    foreign_title: bool = False,
    jpeg_as_png: bool = False,
) -> Generated:
    """A whole session file; options left as None are chosen by the seed. Without `media`,
    no prompt carries an image or a PDF (for figures that count text alone).
    `old_compactions` are 1.0.6x's (a summary record mid-file, no compact_boundary), each
    `restarts` a prompt with no parent after the first of them; `away` adds 2.1's recaps,
    `foreign_title` a `summary` record about another file; with `jpeg_as_png` a prompt's
    image is a JPEG typed image/png."""
    rng = random.Random(seed)
    era = era or rng.choice(sorted(ERAS))
    version, model = ERAS[era]
    turns = turns if turns is not None else rng.randint(6, 16)
    if compactions is None:
        compactions = 0 if era == "old" else rng.choice([0, 1, 1, 2, 3])
    if summary_first is None:
        summary_first = era == "old" and rng.random() < 0.5
    if repairs is None:
        repairs = rng.random() < 0.4
    s = SessionFile(rng, era, version, model)
    s.media, s.away, s.jpeg_as_png = media, away, jpeg_as_png
    if era == "newest":
        s.recent_record("permission-mode")
    if era != "old":
        s.warmup()
    if headless:
        s.headless_start()
    elif summary_first:
        s.summary_first()
    # compactions in the first two thirds: the last one leaves a past to compact again
    span = range(1, max(2, turns * 2 // 3))
    compact_at = sorted(rng.sample(span, min(compactions, len(span))))
    old_at = list(range(1, turns, max(1, turns // (old_compactions + 1))))[1 : old_compactions + 1]
    restart_at = [n + 1 for n in old_at[:restarts]]
    for n in range(turns):
        if n in compact_at:
            s.compaction()
        if n in old_at:
            s.old_compaction()
        elif n in restart_at:
            s.restart()
        s.turn(repairs=repairs, last=n == turns - 1)
    if era == "newest":
        s.recent_record("last-prompt")
    s.finish(title=rng.random() < 0.5)
    if foreign_title:
        s.contaminated_title()
    s.truth.shapes["several-compactions"] += int(compactions > 1)
    s.truth.shapes["two-session-ids"] += int(len(s.truth.session_ids) > 1)
    return Generated(s.records, s.truth, array)


# Named files that, between them, hold every shape in SHAPES (a test checks that they do).
CASES: dict[str, dict[str, Any]] = {
    "old-summary-first-array": {"seed": 11, "era": "old", "summary_first": True, "array": True},
    "old-jsonl": {"seed": 12, "era": "old", "summary_first": False, "repairs": False},
    "recent-one-compaction": {"seed": 21, "era": "recent", "compactions": 1, "repairs": False},
    "newest-several-compactions": {
        "seed": 31,
        "era": "newest",
        "compactions": 3,
        "repairs": False,
        "turns": 16,
    },
    "broken-pairs": {"seed": 41, "era": "newest", "repairs": True, "headless": True, "turns": 14},
    "old-mid-file-compactions": {
        "seed": 51,
        "era": "old",
        "summary_first": False,
        "repairs": False,
        "turns": 30,
        "old_compactions": 2,
        "restarts": 1,
        "foreign_title": True,
    },
    "newest-recaps": {"seed": 61, "era": "newest", "repairs": False, "away": True, "turns": 6},
    "newest-pasted-jpeg": {
        "seed": 71,
        "era": "newest",
        "repairs": False,
        "turns": 8,
        "jpeg_as_png": True,
    },
}


def case(name: str, **changes: Any) -> Generated:
    options = CASES[name] | changes
    return generate(**options)


def foreign_files(folder: Path) -> list[Path]:
    """Trajectories of other agents (SWE-agent's JSON object, OpenHands' event lines)."""
    swe = folder / "task.traj"
    history = [{"role": "user", "content": "fix the bug"}, {"role": "assistant", "content": "ok"}]
    swe.write_text(json.dumps({"trajectory": [], "history": history, "info": {}}, indent=2))
    hands = folder / "output.jsonl"
    events = [{"instance_id": f"i{n}", "history": [{"action": "run"}]} for n in range(3)]
    hands.write_text("".join(json.dumps(e) + "\n" for e in events))
    return [swe, hands]
