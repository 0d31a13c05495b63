"""Claude Code run twice on one session: generated files of every era, their conversation
from a typed prompt on written a second time, at the same time, as another branch (new
uuids, the same parent), the two interleaved record by record. The import is the file
written once, the other branch kept out of the view."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton_testkit.claude_code_gen import generate

Record = dict[str, Any]


def typed(record: Record) -> bool:
    content = (record.get("message") or {}).get("content")
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    if isinstance(content, str):
        return not content.startswith("[")
    return any(b.get("type") == "text" and not b["text"].startswith("[") for b in content or [])


def other_branch(tail: list[Record]) -> list[Record]:
    """`tail` written again by another process: new uuids, call ids and API ids, its texts
    marked, under the same parent as its first record."""
    renamed = {r["uuid"]: r["uuid"] + "-b" for r in tail if isinstance(r.get("uuid"), str)}
    out = []
    for record in tail:
        if record.get("uuid") not in renamed or record.get("isSidechain"):
            continue
        again = copy.deepcopy(record)
        again["uuid"] = renamed[record["uuid"]]
        again["parentUuid"] = renamed.get(again.get("parentUuid"), again.get("parentUuid"))
        message = again.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                message["id"] += "b"
            if isinstance(message.get("content"), str):
                message["content"] = "OTHER " + message["content"]
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                for key in ("id", "tool_use_id"):
                    if isinstance(block.get(key), str):
                        block[key] += "b"
                if block.get("type") == "text":
                    block["text"] = "OTHER " + block["text"]
        out.append(again)
    return out


def written_twice(records: list[Record], rng: random.Random) -> list[Record] | None:
    """`records` with a second branch from a typed prompt after the last compaction,
    interleaved, the records' own branch written last; None when there is no such prompt."""
    restarts = [
        i
        for i, r in enumerate(records)
        if r.get("parentUuid", "") is None or r.get("subtype") == "compact_boundary"
    ]
    after = max(restarts, default=0) + 2
    prompts = [
        i
        for i, r in enumerate(records)
        if i >= after and typed(r) and isinstance(r.get("parentUuid"), str)
    ]
    if not prompts:
        return None
    fork = rng.choice(prompts)
    tail = records[fork:]
    other = other_branch(tail)
    end = max(i for i, r in enumerate(tail) if r.get("type") in ("user", "assistant"))
    mixed: list[Record] = []
    for record in tail[:end]:
        mixed.append(record)
        for _ in range(rng.randint(0, 2)):
            if other:
                mixed.append(other.pop(0))
    return records[:fork] + mixed + other + tail[end:]


def imported(path: Path, records: list[Record]) -> Session:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    store = SessionStore(path.with_suffix(".data"), char_count)
    try:
        return import_with_report(path, store)[0]
    finally:
        store.close()


@pytest.mark.parametrize("seed", [4, 8, 15, 28, 31, 52])
def test_a_file_written_twice_at_once_imports_as_the_file_written_once(
    tmp_path: Path, seed: int
) -> None:
    records = generate(seed, turns=12, repairs=False).records
    mixed = written_twice(records, random.Random(seed))
    assert mixed is not None

    once = imported(tmp_path / "once.jsonl", records)
    twice = imported(tmp_path / "twice.jsonl", mixed)

    said = [(m.role, m.text()) for m in twice.view_messages()]
    assert said == [(m.role, m.text()) for m in once.view_messages()]
    assert invariant_violations(twice.view_messages()) == []
    assert any("OTHER " in json.dumps(r) for r in twice.opaque)  # kept, out of the view
