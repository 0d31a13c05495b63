"""A Claude Code record whose fields hold JSON of another type than Claude Code writes (a
list or an object for a string, a number for the message): the record is read as far as
it makes sense, and the import goes on; it never ends in a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report

Record = dict[str, Any]


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def prompt(n: int, parent: int | None, text: str) -> Record:
    return {
        "type": "user",
        "uuid": uid(n),
        "parentUuid": uid(parent) if parent else None,
        "sessionId": "5e55-1",
        "message": {"role": "user", "content": text},
    }


def reply(n: int, parent: int, text: str) -> Record:
    message = {
        "id": f"msg_{n}",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 50, "output_tokens": 5},
    }
    return {
        "type": "assistant",
        "uuid": uid(n),
        "parentUuid": uid(parent),
        "sessionId": "5e55-1",
        "message": message,
    }


ASKED = ["what is in a.py?", "a.py prints hi", "and b.py?"]  # the view's texts, in part


def damaged(case: str) -> tuple[list[Record], list[str]]:
    """The records of a case, and what each message of the view must say."""
    first, answer = prompt(1, None, "what is in a.py?"), reply(2, 1, "a.py prints hi")
    later = prompt(3, 2, "and b.py?")
    if case == "message-id-a-list":
        answer["message"]["id"] = ["msg_2"]
    elif case == "role-an-object":
        later["message"]["role"] = {"name": "user"}
    elif case == "block-type-a-list":
        answer["message"]["content"].append({"type": ["text"], "text": "more"})
    elif case == "result-text-an-object":
        block = {"type": "tool_result", "tool_use_id": "t9", "content": [{"text": {"x": 1}}]}
        later["message"]["content"] = [block, {"type": "text", "text": "and b.py?"}]
    elif case == "later-stop-reason-a-list":  # the response's second record
        more = reply(4, 2, "and prints it once")
        more["message"] |= {"id": "msg_2", "stop_reason": ["end_turn"]}
        return [first, answer, more, {**later, "parentUuid": uid(4)}], ASKED
    elif case == "uuid-a-list-beside-two-writers":  # read again, the other branch left out
        other = prompt(6, 2, "in the other terminal")
        others = reply(7, 6, "the other terminal's answer")
        odd = {"type": "system", "subtype": "turn_duration", "uuid": [uid(8)], "parentUuid": uid(9)}
        last = reply(9, 3, "b.py prints bye")
        return [first, answer, other, later, others, last, odd], [*ASKED, "b.py prints bye"]
    elif case == "message-a-number":
        return [{**prompt(9, None, ""), "message": 1}, first, answer, later], ASKED
    elif case == "title-leaf-an-object":
        return [first, answer, later, {"type": "summary", "summary": "A", "leafUuid": {}}], ASKED
    elif case == "compact-metadata-a-string":  # a compaction all the same
        boundary = {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": uid(4),
            "parentUuid": None,
            "logicalParentUuid": uid(2),
            "compactMetadata": "auto",
        }
        summary = {**prompt(5, 4, "Summary: a.py prints hi"), "isCompactSummary": True}
        records = [first, answer, boundary, summary, {**later, "parentUuid": uid(5)}]
        return records, ["Summary: a.py prints hi", "and b.py?"]
    return [first, answer, later], ASKED


CASES = [
    "message-id-a-list",
    "role-an-object",
    "block-type-a-list",
    "result-text-an-object",
    "later-stop-reason-a-list",
    "uuid-a-list-beside-two-writers",
    "message-a-number",
    "title-leaf-an-object",
    "compact-metadata-a-string",
]


@pytest.mark.parametrize("case", CASES)
def test_a_record_with_a_field_of_another_json_type_is_imported_with_the_rest(
    tmp_path: Path, plain_store: SessionStore, case: str
) -> None:
    records, said = damaged(case)
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    session, report = import_with_report(path, plain_store)

    texts = [m.text() for m in session.view_messages()]
    assert len(texts) == len(said)
    assert all(part in text for part, text in zip(said, texts, strict=True)), texts
    assert invariant_violations(session.view_messages()) == []
    assert report.beside == (2 if case == "uuid-a-list-beside-two-writers" else 0)
    session.transcript.close()
    reloaded = plain_store.load(session.session_id)
    assert [m.text() for m in reloaded.view_messages()] == texts  # every record read back
    assert reloaded.load_problems == []
