"""A Claude Code 2.1 compaction that kept recent messages: its compact_boundary names them
(`compactMetadata.preservedSegment` {headUuid, anchorUuid, tailUuid}); they are in the file
before the boundary and not written again, and Claude Code's context after it is the
summary, the kept messages, then what followed. The import's view is the same: a boundary
whose summary stands for the messages before the kept ones (undo brings them all back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton.core.usage.estimator import Estimator, load_cl100k

SID = "5a1e0000-0000-4000-8000-000000000002"
Record = dict[str, Any]


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def record(n: int, kind: str, parent: str | None, content: Any = None, **extra: Any) -> Record:
    out: Record = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "sessionId": SID,
        "version": "2.1.114",
        "uuid": uid(n),
        "timestamp": f"2026-04-01T10:00:{n:02d}.000Z",
        **extra,
    }
    if content is not None:
        out["message"] = {"role": kind, "content": content}
    if kind == "assistant":
        out["message"] |= {
            "id": f"msg_{n:04d}",
            "model": "claude-opus-4-7",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 1_000 * n, "output_tokens": 30},
        }
    return out


def reply(n: int, parent: str, text: str) -> Record:
    return record(n, "assistant", parent, [{"type": "text", "text": text}])


def boundary(n: int, head: int, tail: int, summary: int) -> Record:
    segment = {"headUuid": uid(head), "anchorUuid": uid(summary), "tailUuid": uid(tail)}
    meta = {"trigger": "manual", "preTokens": 120_030, "preservedSegment": segment}
    return record(
        n,
        "system",
        None,
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid=uid(tail),
        compactMetadata=meta,
    )


def summary(n: int, parent: int) -> Record:
    text = "This session is being continued from a previous conversation. Summary: a CLI."
    return record(n, "user", uid(parent), text, isCompactSummary=True)


def records() -> list[Record]:
    return [
        record(1, "user", None, "Set up the project skeleton."),
        reply(2, uid(1), "Done: src/, tests/, pyproject."),
        record(3, "user", uid(2), "Now add a CLI."),
        reply(4, uid(3), "Added cli.py with argparse."),
        record(5, "user", uid(4), "From now on the code word is PELICAN."),  # kept: 5..6
        reply(6, uid(5), "PELICAN. Understood."),
        boundary(7, head=5, tail=6, summary=8),
        summary(8, parent=7),
        record(9, "user", uid(6), "Add a --verbose flag."),
        reply(10, uid(9), "PELICAN. Added --verbose."),
    ]


def imported(tmp: Path, items: list[Record]) -> tuple[Any, Any, SessionStore]:
    path = tmp / "kept.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in items))
    store = SessionStore(tmp / "data", Estimator(encoder=load_cl100k()).count_message)
    session, report = import_with_report(path, store)
    return session, report, store


def test_the_kept_messages_follow_the_summary_in_the_view(tmp_path: Path) -> None:
    session, report, store = imported(tmp_path, records())
    assert session.view == [uid(8), uid(5), uid(6), uid(9), uid(10)]
    assert report.problems == [] and report.repairs == []
    [compaction] = session.boundaries.values()
    assert compaction.direction == "up_to"
    assert compaction.summarized_ids == [uid(1), uid(2), uid(3), uid(4)]
    assert compaction.kept_ids == [uid(5), uid(6)]
    assert all(m.tokens > 0 for m in session.view_messages())
    again = store.load(session.session_id)  # what a restart reads
    assert again.view == session.view
    assert [m.tokens for m in again.view_messages()] == [m.tokens for m in session.view_messages()]


def test_undo_brings_back_what_the_summary_stood_for(tmp_path: Path) -> None:
    session, _, _ = imported(tmp_path, records())
    session.uncompact()
    assert session.view == [uid(n) for n in (1, 2, 3, 4, 5, 6, 9, 10)]


def test_a_kept_segment_that_does_not_end_the_view_is_a_compaction_of_all_of_it(
    tmp_path: Path,
) -> None:
    items = records()
    items[6] = boundary(7, head=3, tail=4, summary=8)  # 5 and 6 came after the "tail"
    session, report, _ = imported(tmp_path, items)
    assert session.view == [uid(8), uid(9), uid(10)]
    assert any("not the end of the view" in p for p in report.problems)
