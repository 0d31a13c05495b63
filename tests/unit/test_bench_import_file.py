"""The import row's file of real transcripts laid end to end: each copy with ids of its own,
so that the import reads one file of many sessions, not one session repeated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conversations import char_count

from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton_testkit.bench_modules import bench_module
from baton_testkit.claude_code_gen import generate

bench_import = bench_module("bench_import")


def test_each_copy_of_the_transcripts_has_ids_of_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    generate(3, era="newest", compactions=0, turns=4, repairs=False).write(folder / "a.jsonl")
    generate(4, era="recent", compactions=1, turns=4, repairs=False).write(folder / "b.jsonl")
    (folder / "notes.txt").write_text("not a transcript")
    one = sum(p.stat().st_size for p in folder.glob("*.jsonl"))

    path = bench_import.write_real_file(tmp_path / "real.jsonl", folder, 2.5 * one / 1e6)

    lines = path.read_text().splitlines()
    assert one * 2.5 <= path.stat().st_size < one * 3.5  # whole transcripts, up to the size
    records = [json.loads(line) for line in lines]
    uuids = [r["uuid"] for r in records if "uuid" in r]
    assert len(uuids) == len(set(uuids))
    per_copy = sum(len(p.read_text().splitlines()) for p in folder.glob("*.jsonl"))
    copies = [calls(records[n : n + per_copy]) for n in range(0, len(records), per_copy)]
    assert len(copies) == 3 and all(copies)
    assert not copies[0] & copies[1] and not copies[1] & copies[2] and not copies[0] & copies[2]
    session, report = import_with_report(path, SessionStore(tmp_path / "data", char_count))
    assert report.repeated == 0 and not any("repeat" in repair for repair in report.repairs)
    assert len(report.session_ids) > 1 and session.view


def calls(records: list[dict[str, Any]]) -> set[str]:
    """The ids of the tool calls the records make."""
    return {
        block["id"]
        for r in records
        if isinstance(r.get("message"), dict) and isinstance(r["message"].get("content"), list)
        for block in r["message"]["content"]
        if block.get("type") == "tool_use"
    }
