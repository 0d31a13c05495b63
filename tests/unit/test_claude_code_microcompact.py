"""Claude Code 2.x clears old tool results before a request (a microcompaction): the file
gets a `system/microcompact_boundary` record naming the calls (`compactedToolIds`), keeps the
results in full, and the next reply's usage is what the API saw after the clearing. The
import clears them in the view too, as a microcompact boundary (undo brings them back), so
the view holds what the API last saw and the meter anchors on that reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.automatic.microcompact import CLEARED
from baton.core.conversation.messages import ToolResultBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers import claude_code
from baton.core.importers.claude_code import ImportReport, import_with_report
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator, load_cl100k
from baton.core.usage.session_usage import compute_usage

SID = "5a1e0000-0000-4000-8000-000000000001"
BIG = "\n".join(f"{i:5d}\tvalue_{i} = compute(x, y, z)  # line {i}" for i in range(2_500))
Record = dict[str, Any]
ENCODER = load_cl100k()


class File:
    """Records of one Claude Code file, each the child of the one before."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    def add(self, kind: str, content: Any = None, **extra: Any) -> Record:
        n = len(self.records) + 1
        record: Record = {
            "parentUuid": self.records[-1]["uuid"] if self.records else None,
            "isSidechain": False,
            "type": kind,
            "sessionId": SID,
            "version": "2.1.100",
            "uuid": f"00000000-0000-4000-8000-{n:012d}",
            "timestamp": f"2025-11-01T10:00:{n:02d}.000Z",
            **extra,
        }
        if content is not None:
            record["message"] = {"role": kind, "content": content}
        self.records.append(record)
        return record

    def reply(self, content: list[Record], context: int, stop: str = "end_turn") -> None:
        record = self.add("assistant", content)
        usage = {"input_tokens": 3, "cache_read_input_tokens": context - 3, "output_tokens": 20}
        record["message"] |= {
            "id": f"msg_{len(self.records):04d}",
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": stop,
            "usage": usage,
        }

    def reads(self, calls: int, *, together: bool = False) -> None:
        """A prompt, then `calls` reads of a big file (parallel calls, their results in
        one record, when `together`)."""
        self.add("user", f"read {calls} files")
        uses = [
            {
                "type": "tool_use",
                "id": f"toolu_{k}",
                "name": "Read",
                "input": {"file_path": f"f{k}"},
            }
            for k in range(calls)
        ]
        results = [
            {"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": BIG}
            for k in range(calls)
        ]
        if together:
            self.reply(uses, 15_000, "tool_use")
            self.add("user", results)
        else:
            for use, result in zip(uses, results, strict=True):
                self.reply([use], 15_000, "tool_use")
                self.add("user", [result])
        self.reply([{"type": "text", "text": "Read them."}], 150_000)

    def microcompact(self, cleared: list[str]) -> None:
        meta = {"trigger": "auto", "preTokens": 150_030, "tokensSaved": 135_000}
        self.add(
            "system",
            subtype="microcompact_boundary",
            content="Context microcompacted",
            microcompactMetadata=meta | {"compactedToolIds": cleared},
        )


def imported(tmp: Path, file: File) -> tuple[Session, ImportReport, SessionStore, Estimator]:
    path = tmp / "mc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in file.records))
    estimator = Estimator(encoder=ENCODER)
    store = SessionStore(tmp / "data", estimator.count_message)
    session, report = import_with_report(path, store)
    return session, report, store, estimator


def results(session: Session) -> list[tuple[str, str]]:
    return [
        (b.tool_use_id, b.content if isinstance(b.content, str) else "")
        for m in session.view_messages()
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


@pytest.fixture(params=["held", "written"])
def written(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the messages are written (and let go) before the microcompaction comes: a
    write after every record, as a big file's batches do."""
    if request.param == "written":
        monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 1)
    return bool(request.param == "written")


@pytest.mark.parametrize("together", [False, True])
def test_the_cleared_results_are_cleared_in_the_view_and_the_meter_anchors(
    tmp_path: Path, together: bool, written: bool
) -> None:
    file = File()
    file.reads(3, together=together)
    file.add("user", "now tell me what they have in common")
    file.microcompact(["toolu_0", "toolu_1", "toolu_2"])
    file.reply([{"type": "text", "text": "They all call compute(x, y, z)."}], 15_200)
    session, report, store, estimator = imported(tmp_path, file)
    assert results(session) == [(f"toolu_{k}", CLEARED) for k in range(3)]
    assert report.problems == [] and report.repairs == []
    view = sum(estimator.count_message(m) for m in session.view_messages())
    assert view < 15_220  # what the API last saw: the view holds no more
    assert compute_usage(session, Settings(), estimator).used_tokens == 15_220
    again = store.load(session.session_id)
    assert again.view == session.view and results(again) == results(session)
    session.uncompact()  # undo: the results in full again
    assert results(session) == [(f"toolu_{k}", BIG) for k in range(3)]


def test_results_it_did_not_name_stay_whole(tmp_path: Path, written: bool) -> None:
    file = File()
    file.reads(3, together=True)
    file.microcompact(["toolu_0", "toolu_2", "toolu_elsewhere"])
    file.reply([{"type": "text", "text": "Done."}], 60_000)
    session, report, _, _ = imported(tmp_path, file)
    if not written:  # the message is at hand: copied with two of its three results cleared
        assert results(session) == [("toolu_0", CLEARED), ("toolu_1", BIG), ("toolu_2", CLEARED)]
        assert report.problems == []
    else:  # written and let go already: kept whole, and the report says so
        assert results(session) == [(f"toolu_{k}", BIG) for k in range(3)]
        [problem] = report.problems
        assert "only some of its tool results were cleared" in problem


def test_a_microcompaction_that_clears_nothing_of_the_view_stays_opaque(tmp_path: Path) -> None:
    file = File()
    file.reads(1)
    file.microcompact(["toolu_gone"])
    session, report, _, _ = imported(tmp_path, file)
    assert results(session) == [("toolu_0", BIG)]
    assert not session.boundaries
    assert report.kinds["system/microcompact_boundary"] == 1 and report.opaque == 1
