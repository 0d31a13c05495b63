"""Claude Code writes a record again under the same uuid: the same line several times in a
row, or earlier history appended to the file again (after `--input-format stream-json`
turns, a reopened editor, compactions). It reads its file by uuid, so a repeat is the same
message to it; the import takes each record once and keeps the repeats as opaque records."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import ImportReport, import_with_report
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator, load_cl100k
from baton.core.usage.session_usage import compute_usage
from baton_testkit.claude_code_gen import generate

Record = dict[str, Any]
SID = "5a1e0000-0000-4000-8000-000000000000"
ENCODER = load_cl100k()


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def record(role: str, n: int, parent: int | None, content: Any) -> Record:
    message: Record = {"role": role, "content": content}
    if role == "assistant":
        message |= {
            "id": f"msg_{n}",
            "model": "claude-sonnet-4-20250514",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 40 * n, "output_tokens": 5},
        }
    return {
        "parentUuid": uid(parent) if parent else None,
        "isSidechain": False,
        "type": role,
        "sessionId": SID,
        "version": "1.0.67",
        "uuid": uid(n),
        "timestamp": f"2025-08-01T10:00:{n:02d}.000Z",
        "message": message,
    }


def imported(tmp: Path, records: list[Record], name: str) -> tuple[Session, ImportReport]:
    path = tmp / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    store = SessionStore(tmp / f"data-{name}", Estimator(encoder=ENCODER).count_message)
    return import_with_report(path, store)


def shown(session: Session) -> list[tuple[str, list[Any]]]:
    """The view's roles and contents, not its ids (a repeat may shift a derived id)."""
    return [(m.role, [b.model_dump() for b in m.content]) for m in session.view_messages()]


def test_an_assistant_record_written_twice_is_one_message_with_its_blocks_once(
    tmp_path: Path,
) -> None:
    records = [
        record("user", 1, None, "hello there"),
        record("assistant", 2, 1, [{"type": "text", "text": "Hi! How can I help?"}]),
    ]
    session, report = imported(tmp_path, [*records, copy.deepcopy(records[-1])], "twice")
    assert [(m.role, [b.text for b in m.content]) for m in session.view_messages()] == [  # type: ignore[union-attr]
        ("user", ["hello there"]),
        ("assistant", ["Hi! How can I help?"]),
    ]
    assert report.repeated == 1
    assert report.merged_records == 0
    assert any("written again" in note for note in report.notes())


def test_a_prompt_and_a_result_written_several_times_are_in_the_view_once(
    tmp_path: Path,
) -> None:
    call = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "a.py"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "print(1)"}
    prompt = record("user", 1, None, "please read a.py")
    answer = record("user", 3, 2, [result])
    records = [prompt, *(copy.deepcopy(prompt) for _ in range(3))]  # four in a row
    records += [record("assistant", 2, 1, [call]), answer, copy.deepcopy(answer)]
    records.append(record("assistant", 4, 3, [{"type": "text", "text": "It prints 1."}]))
    session, report = imported(tmp_path, records, "many")
    assert [m.role for m in session.view_messages()] == ["user", "assistant", "user", "assistant"]
    assert report.repairs == []  # the repeated result is no stray result to repair
    assert report.repeated == 4


def conversation_uuids(records: list[Record]) -> list[str]:
    """The uuids of the records the import takes as conversation (repeats are of these)."""
    return [
        r["uuid"]
        for r in records
        if not r.get("isSidechain")
        and isinstance(r.get("uuid"), str)
        and (r.get("type") in ("user", "assistant") or r.get("subtype") == "compact_boundary")
    ]


@pytest.mark.parametrize("seed", range(6))
def test_history_written_again_imports_as_the_file_without_it(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    records = generate(seed, compactions=seed % 3).records
    repeated: list[Record] = []
    for n, item in enumerate(records):
        repeated.append(item)
        if rng.random() < 0.1:  # the same line again, right after it
            repeated.append(copy.deepcopy(item))
        if n == len(records) // 2:  # the history so far appended again
            repeated += copy.deepcopy(records[: n + 1])
    session, report = imported(tmp_path, records, "once")
    again, again_report = imported(tmp_path, repeated, "again")
    assert shown(again) == shown(session)
    estimator = Estimator(encoder=ENCODER)
    usage = compute_usage(session, Settings(), estimator)
    assert compute_usage(again, Settings(), estimator).used_tokens == usage.used_tokens
    assert (again_report.messages, again_report.repairs) == (report.messages, report.repairs)
    once = conversation_uuids(records)
    assert again_report.repeated == len(conversation_uuids(repeated)) - len(once) > 0


def test_a_jsonl_files_repeats_are_told_as_a_json_arrays_are(tmp_path: Path) -> None:
    """A JSONL record's line is read again when its uuid comes back (an array's item is
    fingerprinted as it is read): the line is found past a byte order mark, CRLF line
    ends, blank and broken lines and a line of a megabyte, and a uuid reused for another
    message is no repeat in either form."""
    prompt = record("user", 1, None, "hello there")
    reply = record("assistant", 2, 1, [{"type": "text", "text": "x" * 1_000_000}])
    other = record("user", 3, 2, "and another thing")
    reused = copy.deepcopy(other)
    reused["message"]["content"] = "not the same message"
    records = [prompt, reply, other, reply, prompt, reused, other]
    lines = [json.dumps(r) for r in records]
    text = "\ufeff" + lines[0] + "\r\n\n{broken\n" + "\r\n".join(lines[1:3]) + "\n   \n"
    (tmp_path / "lines.jsonl").write_text(text + "\n".join(lines[3:]) + "\n", encoding="utf-8")
    (tmp_path / "array.json").write_text(json.dumps(records), encoding="utf-8")
    found = []
    for name in ("lines.jsonl", "array.json"):
        store = SessionStore(tmp_path / f"data-{name}", Estimator(encoder=ENCODER).count_message)
        session, report = import_with_report(tmp_path / name, store)
        found.append((shown(session), report.repeated, report.messages))
    assert found[0] == found[1]
    assert found[0][1] == 3  # the reply, the prompt, the other prompt; not the reused uuid
    assert [text for _, [*blocks] in found[0][0] for text in [blocks[0]["text"][:12]]] == [
        "hello there",
        "x" * 12,
        "and another ",
        "not the same",
    ]
