"""Claude Code run twice on one session (resumed in two terminals), or an earlier branch
resumed after an edit: two branches from one record go on in the file at once, record by
record. The view is the chain Claude Code resumes, the other branch kept out of it: in
written cases, and in generated files of every era whose conversation from a typed prompt
on is written a second time (new uuids, the same parent), interleaved."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count
from test_claude_code_edits import EDITED, call, imported, result, text
from test_claude_code_formats import SUMMARY, record

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers import claude_code
from baton.core.importers.claude_code import import_with_report
from baton_testkit.claude_code_gen import generate

Record = dict[str, Any]


def typed(written: Record) -> bool:
    content = (written.get("message") or {}).get("content")
    if written.get("type") != "user" or written.get("isMeta") or written.get("isCompactSummary"):
        return False
    if isinstance(content, str):
        return not content.startswith("[")
    return any(b.get("type") == "text" and not b["text"].startswith("[") for b in content or [])


def other_branch(tail: list[Record]) -> list[Record]:
    """`tail` written again by another process: new uuids, call ids and API ids, its texts
    marked, under the same parent as its first record."""
    renamed = {r["uuid"]: r["uuid"] + "-b" for r in tail if isinstance(r.get("uuid"), str)}
    out = []
    for written in tail:
        if written.get("uuid") not in renamed or written.get("isSidechain"):
            continue
        again = copy.deepcopy(written)
        again["uuid"] = renamed[written["uuid"]]
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
    for written in tail[:end]:
        mixed.append(written)
        for _ in range(rng.randint(0, 2)):
            if other:
                mixed.append(other.pop(0))
    return records[:fork] + mixed + other + tail[end:]


def imported_file(path: Path, records: list[Record]) -> Session:
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

    once = imported_file(tmp_path / "once.jsonl", records)
    twice = imported_file(tmp_path / "twice.jsonl", mixed)

    said = [(m.role, m.text()) for m in twice.view_messages()]
    assert said == [(m.role, m.text()) for m in once.view_messages()]
    assert invariant_violations(twice.view_messages()) == []
    assert any("OTHER " in json.dumps(r) for r in twice.opaque)  # kept, out of the view


def two_processes(last_writer: str) -> list[dict[str, Any]]:
    """Claude Code resumed in two terminals: each prompt goes under the same record, and
    the two conversations go on written into one file at once, record by record; the one
    written last is `last_writer`'s ("A" or "B")."""
    shared = [
        record("user", "u1", "read a.py", None),
        record("assistant", "a1", text("It sets x."), "u1"),
    ]
    both = [
        record("user", "pA", "now make x two", "a1"),
        record("user", "pB", "now make x three", "a1"),
        record("assistant", "aA", call("toolu_A"), "pA"),
        record("assistant", "aB", call("toolu_B"), "pB"),
        record("user", "rA", result("toolu_A"), "aA"),
        record("user", "rB", result("toolu_B"), "aB"),
        record("assistant", "dA", text("Done: x is 2."), "rA"),
        record("assistant", "dB", text("Done: x is 3."), "rB"),
    ]
    writer = "A" if last_writer == "A" else "B"
    last = [
        record("user", f"q{writer}", "and y?", f"d{writer}"),
        record("assistant", f"y{writer}", text("y is 1."), f"q{writer}"),
    ]
    return shared + both + last


@pytest.mark.parametrize(("last_writer", "batch"), [("A", 3), ("B", claude_code.FLUSH_RECORDS)])
def test_two_processes_writing_one_file_give_the_chain_of_the_last_one(
    tmp_path: Path,
    store: SessionStore,
    monkeypatch: pytest.MonkeyPatch,
    last_writer: str,
    batch: int,
) -> None:
    """The records of two conversations interleaved in one file made one view in file
    order, each turn of one followed by a turn of the other. The view is the chain Claude
    Code resumes, from the last record back by parent; the other conversation's records
    are kept beside it, out of the view (the file read twice: the first read's batches,
    written already, are removed)."""
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", batch)
    session, report = imported(tmp_path, store, two_processes(last_writer))

    mine = ["p", "a", "r", "d", "q", "y"]
    assert session.view == ["u1", "a1", *(f"{kind}{last_writer}" for kind in mine)]
    assert invariant_violations(session.view_messages()) == []
    other = "B" if last_writer == "A" else "A"
    kept = [r.get("uuid") for r in session.opaque]
    assert kept == [f"{kind}{other}" for kind in ("p", "a", "r", "d")]
    assert report.edits == 0
    assert (
        "4 record(s) of another branch from the chain Claude Code resumes, which goes on in "
        "the file beside it (Claude Code run twice on the session, or an earlier branch "
        "resumed): kept as opaque, out of the view"
    ) in report.notes()
    assert sorted(p.name for p in store.sessions_dir.iterdir()) == [f"{session.session_id}.jsonl"]


def test_an_earlier_branch_resumed_and_continued_is_the_view(
    tmp_path: Path, store: SessionStore
) -> None:
    """A prompt edited, then the branch it left resumed (/resume lists each branch) and
    continued: the edit's branch is not what Claude Code resumes, and the turns written
    after it do not go on from it."""
    records = [
        *EDITED,
        record("user", "u4", "and y?", "a3"),  # goes on from the branch u2b left
        record("assistant", "a4", text("y is 1."), "u4"),
    ]
    session, report = imported(tmp_path, store, records)

    assert session.view == ["u1", "a1", "u2", "a2", "r2", "a3", "u4", "a4"]
    assert [r.get("uuid") for r in session.opaque] == ["u2b", "a2b"]
    assert report.edits == 0 and report.beside == 2
    assert invariant_violations(session.view_messages()) == []


def test_the_model_and_title_are_those_of_the_chain_claude_code_resumes(
    tmp_path: Path, store: SessionStore
) -> None:
    """The other terminal ran another model (/model), answered last, and Claude Code titled
    its branch: the session took that model and title, though its view is the other chain
    (the last record is that chain's prompt); the model is the one the next request goes
    to."""
    records = two_processes("A")[:-1]  # A's last prompt, not answered yet
    opus = record("assistant", "yB", text("x is 3 now."), "dB")
    opus["message"]["model"] = "claude-opus-4-7"
    records.insert(-1, opus)
    records += [
        {"type": "summary", "summary": "Making x three", "leafUuid": "yB"},
        {"type": "summary", "summary": "Making x two", "leafUuid": "qA"},
        {"type": "summary", "summary": "Making x three, again", "leafUuid": "yB"},
    ]
    session, _ = imported(tmp_path, store, records)

    assert session.view[-1] == "qA"
    assert session.model == "claude-sonnet-4-20250514"
    assert session.title == "Making x two"


@pytest.mark.parametrize("last_writer", ["A", "B"])
def test_a_compaction_in_one_of_two_processes_stays_in_its_conversation(
    tmp_path: Path, store: SessionStore, last_writer: str
) -> None:
    """One terminal compacts (a compact_boundary with no parent, naming its logical parent,
    then the summary) while the other goes on: the compaction belongs to the first one's
    conversation, and is in the view only when that conversation is."""
    records = two_processes("B")[:-2]  # both answered; B's last turn follows
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "cA",
        "parentUuid": None,
        "logicalParentUuid": "dA",
        "sessionId": "cc-1",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "manual", "preTokens": 900},
    }
    summary = record("user", "sA", text(SUMMARY), "cA", isCompactSummary=True)
    after = [record("user", "qA", "and z?", "sA"), record("assistant", "zA", text("z is 0."), "qA")]
    b_last = [record("user", "qB", "and y?", "dB"), record("assistant", "yB", text("y."), "qB")]
    tail = [boundary, summary, b_last[0], *after, b_last[1]]
    if last_writer == "A":
        tail = [boundary, summary, *b_last, *after]
    session, report = imported(tmp_path, store, records + tail)

    if last_writer == "B":
        assert session.view == ["u1", "a1", "pB", "aB", "rB", "dB", "qB", "yB"]
        assert session.compactions == 0
    else:
        assert session.view == ["sA", "qA", "zA"] and session.compactions == 1
        session.uncompact()
        assert session.view == ["u1", "a1", "pA", "aA", "rA", "dA", "qA", "zA"]
    assert invariant_violations(session.view_messages()) == []
    assert report.edits == 0 and report.beside > 0


async def test_the_second_read_never_takes_the_progress_back(
    tmp_path: Path, store: SessionStore
) -> None:
    """Read a second time for the conversation Claude Code resumes, the file's progress went
    from 100% back to 0 (a progress bar must only rise): the second read says its percent
    in words, with no fraction."""
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in two_processes("B")), encoding="utf-8")
    reported: list[tuple[str, float | None]] = []

    session, _ = await claude_code.import_off_loop(
        path, store, progress=lambda m, f: reported.append((m, f))
    )

    fractions = [f for _, f in reported if f is not None]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    again = [m for m, f in reported if f is None]
    assert again and all(m.startswith("Reading two.jsonl again, for two") for m in again)
    assert again[-1].endswith(": 100%")
    assert reported[-1] == ("Opening the imported session", 1.0)
    assert session.view[-2:] == ["qB", "yB"]
